package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"panto.dev/panto"
)

// step is a step object of the case's turns (tests/conformance/README.md, "Steps"): exactly
// one key, and its value.
type step struct {
	key   string
	value json.RawMessage
}

func (s *step) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	if len(m) != 1 {
		return fmt.Errorf("a step holds exactly one key: %s", data)
	}
	for k, v := range m {
		s.key, s.value = k, v
	}
	return nil
}

// caseRun is the state the steps act on: the agent (which reopen_agent replaces) and what
// makes another one, the last export's text.
type caseRun struct {
	agent  *panto.Agent
	config []byte
	tools  []panto.Tool
	extra  int
	emit   func(map[string]any)

	lastExport []byte
}

// newAgent makes an agent of the case's config and tools.
func (r *caseRun) newAgent() (*panto.Agent, error) {
	agent, err := panto.NewAgentJSON(r.config)
	if err != nil {
		return nil, err
	}
	for _, t := range r.tools {
		if err := agent.AddTool(t); err != nil {
			agent.Close()
			return nil, err
		}
	}
	return agent, nil
}

// runStep prints the line(s) of one step; false stops the case (the agent is gone).
func (r *caseRun) runStep(s step) bool {
	switch s.key {
	case "set_config":
		r.emit(codeLine("set_config", r.agent.SetConfigJSON(s.value), true))
	case "export":
		doc, err := r.agent.Export()
		if err != nil {
			r.emit(codeLine("export", err, true))
			return true
		}
		r.lastExport = doc
		r.emit(map[string]any{"event": "export", "text": string(doc)})
	case "reimport":
		if r.lastExport == nil {
			die(`"reimport" before any "export"`)
		}
		err := r.agent.Import(r.lastExport)
		identical := false
		if err == nil {
			again, xerr := r.agent.Export()
			err = xerr
			identical = xerr == nil && bytes.Equal(again, r.lastExport)
		}
		line := codeLine("reimport", err, true)
		line["identical"] = identical
		r.emit(line)
	case "import":
		var doc bytes.Buffer
		if err := json.Compact(&doc, s.value); err != nil {
			die("import: " + err.Error())
		}
		r.emit(codeLine("import", r.agent.Import(doc.Bytes()), true))
	case "import_text":
		var text string
		mustDecode(s, &text)
		r.emit(codeLine("import", r.agent.Import([]byte(text)), true))
	case "truncate", "drop_last":
		var k int
		mustDecode(s, &k)
		var err error
		if s.key == "truncate" {
			err = r.agent.Truncate(k)
		} else {
			err = r.agent.DropLast(k)
		}
		line := codeLine(s.key, err, false)
		line["message_count"] = r.messageCount()
		r.emit(line)
	case "count_tokens":
		var input *string
		mustDecode(s, &input)
		var parts []panto.Part
		if input != nil {
			parts = []panto.Part{panto.Text(*input)}
		}
		counted, err := r.agent.CountTokens(context.Background(), parts...)
		line := codeLine(s.key, err, false)
		line["input_tokens"], line["estimated"] = counted.InputTokens, counted.Estimated
		r.emit(line)
	case "spent":
		spent, err := r.agent.Spent()
		line := codeLine(s.key, err, false)
		u := spent.Usage
		line["usage"] = map[string]any{"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens,
			"cache_read_tokens": u.CacheReadTokens, "cache_write_tokens": u.CacheWriteTokens, "reasoning_tokens": u.ReasoningTokens}
		line["cost"] = nil
		if err == nil && spent.Cost >= 0 {
			line["cost"] = spent.Cost
		}
		r.emit(line)
	case "list_models":
		listed, err := r.agent.ListModels(context.Background())
		line := codeLine(s.key, err, false)
		models := []map[string]any{}
		for _, m := range listed {
			entry := map[string]any{"id": m.ID, "display_name": nil, "created": nil, "known": m.Info != nil, "max_input_tokens": nil}
			if m.DisplayName != "" {
				entry["display_name"] = m.DisplayName
			}
			if m.Created != "" {
				entry["created"] = m.Created
			}
			if m.Info != nil && m.Info.MaxInputTokens != 0 {
				entry["max_input_tokens"] = m.Info.MaxInputTokens
			}
			models = append(models, entry)
		}
		line["models"] = models
		r.emit(line)
	case "rollback_turn":
		removed, err := r.agent.RollbackTurn()
		line := codeLine(s.key, err, false)
		line["removed"] = removed
		line["message_count"] = r.messageCount()
		r.emit(line)
	case "compact":
		var given struct {
			Instructions string `json:"instructions"`
		}
		if string(s.value) != "true" {
			mustDecode(s, &given)
		}
		stream, err := r.agent.CompactWith(context.Background(), given.Instructions)
		if err != nil {
			r.emit(codeLine("compact", err, false))
			return true
		}
		defer stream.Close()
		for stream.Next() {
			r.emit(eventLine(stream.Event()))
		}
		r.emit(endLine(stream))
		extraNext(stream, r.extra, r.emit)
	case "pending_round":
		calls, err := r.agent.PendingRound()
		line := codeLine(s.key, err, false)
		listed := []map[string]any{}
		for _, c := range calls {
			listed = append(listed, map[string]any{"id": c.ID, "name": c.Name, "input": c.Input, "state": c.State.String()})
		}
		line["calls"] = listed
		r.emit(line)
	case "resume_turn":
		return runTurn(r.agent, turn{resume: true}, r.extra, -1, nil, r.emit)
	case "session_info":
		info, err := r.agent.Session()
		line := codeLine("session", err, false)
		line["id"], line["resumed"], line["torn_bytes"] = info.ID, info.Resumed, info.TornBytes
		line["message_count"] = r.messageCount()
		r.emit(line)
	case "mcp_status":
		servers, err := r.agent.MCPStatus()
		line := codeLine(s.key, err, true)
		list := []map[string]any{}
		for _, m := range servers {
			list = append(list, map[string]any{"name": m.Name, "transport": m.Transport, "state": string(m.State),
				"protocol_version": m.ProtocolVersion, "server_name": m.ServerName, "server_version": m.ServerVersion,
				"tool_count": m.ToolCount, "error": m.Error, "stderr_tail": m.StderrTail})
		}
		line["servers"] = list
		r.emit(line)
	case "reopen_agent":
		r.agent.Close()
		agent, err := r.newAgent()
		r.emit(codeLine("reopen_agent", err, true))
		if err != nil {
			return false
		}
		r.agent = agent
	case "second_agent":
		second, err := r.newAgent()
		if err == nil {
			second.Close()
		}
		r.emit(codeLine("second_agent", err, false))
	case "fork":
		var f struct {
			MessageCount int    `json:"message_count"`
			ID           string `json:"id"`
		}
		mustDecode(s, &f)
		_, err := r.agent.Fork(f.MessageCount, f.ID)
		r.emit(codeLine("fork", err, false))
	case "list_sessions":
		r.emit(r.sessionsLine())
	case "append_to_session":
		var text string
		mustDecode(s, &text)
		info, err := r.agent.Session()
		if err != nil {
			die("append_to_session: " + err.Error())
		}
		f, err := os.OpenFile(info.Path, os.O_WRONLY|os.O_APPEND, 0)
		if err == nil {
			_, err = f.WriteString(text)
			err = errors.Join(err, f.Close())
		}
		if err != nil {
			die("append_to_session: " + err.Error())
		}
		r.emit(map[string]any{"event": "append_to_session"})
	default:
		die("unknown step " + s.key)
	}
	return true
}

// sessionsLine lists the sessions of the case's session folder, four keys a session.
func (r *caseRun) sessionsLine() map[string]any {
	var cfg struct {
		Session struct {
			Dir string `json:"dir"`
		} `json:"session"`
	}
	if err := json.Unmarshal(r.config, &cfg); err != nil {
		die("list_sessions: " + err.Error())
	}
	sessions, err := panto.ListSessions(cfg.Session.Dir)
	line := codeLine("sessions", err, false)
	list := []map[string]any{}
	for _, s := range sessions {
		var parent any // JSON null
		if s.Parent != nil {
			parent = map[string]any{"id": s.Parent.ID, "message_count": s.Parent.MessageCount}
		}
		list = append(list, map[string]any{"id": s.ID, "message_count": s.MessageCount,
			"first_user_text": s.FirstUserText, "parent": parent})
	}
	line["sessions"] = list
	return line
}

// messageCount is the agent's message count, for the lines that show it.
func (r *caseRun) messageCount() int {
	n, err := r.agent.MessageCount()
	if err != nil {
		die("message count: " + err.Error())
	}
	return n
}

// codeLine is the line {"event": event, "code": C} of a call that returned err, with the
// error's "message" when withMessage and it failed.
func codeLine(event string, err error, withMessage bool) map[string]any {
	line := map[string]any{"event": event, "code": statusName(err)}
	var perr *panto.Error
	if withMessage && errors.As(err, &perr) {
		line["message"] = perr.Message
	} else if withMessage && err != nil {
		line["message"] = err.Error()
	}
	return line
}

// mustDecode reads a step's value into v, or stops the driver.
func mustDecode(s step, v any) {
	if err := json.Unmarshal(s.value, v); err != nil {
		die(fmt.Sprintf("step %s: %v", s.key, err))
	}
}
