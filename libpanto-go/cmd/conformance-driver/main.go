// Command conformance-driver is the Go driver of the conformance cases
// (tests/conformance/README.md):
//
//	conformance-driver CASE_JSON BASE_URL
//
// It reads the case, creates one agent from its "config" (with "base_url" set to BASE_URL
// unless the case sets it), runs each turn and prints the normalized transcript, one JSON
// object per line. The case's host tools are declared with panto.Tool and run by the
// stream itself while the driver iterates. With "cancel_after_ms", the first turn's context
// is canceled by a timer that long after Run returned, while Next is blocked; with
// "on_error", a turn's first failure is followed by Agent.SetConfigJSON and Stream.Reopen.
// "end_early" ends a turn by Close or the collector (end_early.go), and "print_conversation"
// prints the conversation last. A turn given as a list of parts runs with Agent.RunParts, and
// a tool whose behavior is "return_parts" has a PartsHandler (parts.go); one given as a step
// object exports, imports, truncates, compacts or handles sessions instead (steps.go).
// It exits 0 whenever it printed a transcript (even one ending in an error), 2 when it could
// not run.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"panto.dev/panto"
)

type testCase struct {
	Config        map[string]json.RawMessage `json:"config"`
	Turns         []turn                     `json:"turns"`
	ExtraNext     *int                       `json:"extra_next"`
	Tools         []caseTool                 `json:"tools"`
	CancelAfterMs *int                       `json:"cancel_after_ms"`
	CancelTurn    int                        `json:"cancel_turn"` // the turn cancel_after_ms cancels
	OnError       *onError                   `json:"on_error"`
	// ExpectConnections present: the agent's connection counters are printed after the turns.
	ExpectConnections json.RawMessage `json:"expect_connections"`
	EndEarly          *endEarly       `json:"end_early"`
	// PrintConversation: the agent's conversation is printed last.
	PrintConversation bool `json:"print_conversation"`
	// PrintErrorDetail: error lines have "retry_after" and "headers" too.
	PrintErrorDetail bool `json:"print_error_detail"`
	// PrintRequestIDs: message_start lines have "request_id" too.
	PrintRequestIDs bool `json:"print_request_ids"`
	// PrintCosts: message_end and message_complete lines have "cost" too.
	PrintCosts bool `json:"print_costs"`
	// Approvals: per call id, "approve" or {"deny": REASON} (README.md, "Approvals in a case").
	Approvals map[string]json.RawMessage `json:"approvals"`
	// Steer: what to steer or follow up with, after which event (README.md, "Steering in a case").
	Steer []steerEntry `json:"steer"`
}

// The case's print_error_detail and print_request_ids.
var printErrorDetail, printRequestIDs, printCosts bool

// endEarly is how the turn Turn ends before its end: one of the three ways is set.
type endEarly struct {
	Turn int `json:"turn"`
	// After the CloseAfterDeltas-th content delta, the driver closes the stream.
	CloseAfterDeltas *int `json:"close_after_deltas"`
	// After the DropAfterDeltas-th content delta, the driver drops the stream unclosed and
	// collects it.
	DropAfterDeltas *int `json:"drop_after_deltas"`
	// FreeBlockedAfterMs after Run, a timer closes the stream while Next waits.
	FreeBlockedAfterMs *int `json:"free_blocked_after_ms"`
}

// onError is what the driver does after a turn's first failure.
type onError struct {
	SetConfig json.RawMessage `json:"set_config"` // the changes, a JSON object; nil: none
	Reopen    bool            `json:"reopen"`
}

// caseTool is a host tool of the case: its spec and what its handler does.
type caseTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	Capabilities []string        `json:"capabilities"`
	Sequential   bool            `json:"sequential"`
	Approval     string          `json:"approval"`
	Behavior     behavior        `json:"behavior"`
}

// tool builds the case's tool with the binding's own API.
func (ct caseTool) tool() (panto.Tool, error) {
	t := panto.Tool{
		Name:          ct.Name,
		Description:   ct.Description,
		InputSchema:   ct.InputSchema,
		Capabilities:  ct.Capabilities,
		Sequential:    ct.Sequential,
		NeedsApproval: ct.Approval == "always",
	}
	b := ct.Behavior
	switch {
	case b.Return != nil:
		text := *b.Return
		t.Handler = func(ctx context.Context, _ json.RawMessage) (string, error) {
			return text, b.before(ctx)
		}
	case b.Raise != nil:
		text := *b.Raise
		t.Handler = func(ctx context.Context, _ json.RawMessage) (string, error) {
			if err := b.before(ctx); err != nil {
				return "", err
			}
			return "", errors.New(text)
		}
	case b.ReturnInput:
		t.Handler = func(ctx context.Context, input json.RawMessage) (string, error) {
			if err := b.before(ctx); err != nil {
				return "", err
			}
			return sortedJSON(input)
		}
	case b.ReturnParts != nil:
		parts, err := goParts(b.ReturnParts)
		if err != nil {
			return t, fmt.Errorf("tool %q: %v", ct.Name, err)
		}
		t.PartsHandler = func(ctx context.Context, _ json.RawMessage) ([]panto.Part, error) {
			return parts, b.before(ctx)
		}
	default:
		t.Handler = func(ctx context.Context, _ json.RawMessage) (string, error) { return "", b.before(ctx) }
	}
	return t, nil
}

// sortedJSON re-encodes a JSON value compactly with the keys of its objects sorted, in the
// return_input encoding of tests/conformance/README.md.
func sortedJSON(raw json.RawMessage) (string, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return "", err
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return "", err
	}
	return rawLineSeparators(strings.TrimSuffix(b.String(), "\n")), nil
}

// rawLineSeparators turns the \u2028 and \u2029 escapes of encoding/json, which it writes
// even with SetEscapeHTML(false), back into the characters: the encoding has them as UTF-8.
// An escaped backslash followed by "u2028" is left alone.
func rawLineSeparators(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] != '\\':
			b.WriteByte(s[i])
		case strings.HasPrefix(s[i:], `\u2028`):
			b.WriteString("\u2028")
			i += 5
		case strings.HasPrefix(s[i:], `\u2029`):
			b.WriteString("\u2029")
			i += 5
		default: // an escape is two characters or more: copy its first two
			b.WriteString(s[i : i+2])
			i++
		}
	}
	return b.String()
}

func main() {
	if len(os.Args) != 3 {
		die("usage: conformance-driver CASE_JSON BASE_URL")
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		die(err.Error())
	}
	var tc testCase
	if err := json.Unmarshal(data, &tc); err != nil {
		die(fmt.Sprintf("%s: %v", os.Args[1], err))
	}
	if tc.Config == nil {
		die(os.Args[1] + `: the case has no "config" object`)
	}
	if tc.Turns == nil {
		die(os.Args[1] + `: the case has no "turns" array`)
	}
	extra := 1
	if tc.ExtraNext != nil {
		if *tc.ExtraNext < 0 {
			die(os.Args[1] + `: "extra_next" is negative`)
		}
		extra = *tc.ExtraNext
	}
	cancelAfter := time.Duration(-1)
	if tc.CancelAfterMs != nil {
		if *tc.CancelAfterMs < 0 {
			die(os.Args[1] + `: "cancel_after_ms" is negative`)
		}
		cancelAfter = time.Duration(*tc.CancelAfterMs) * time.Millisecond
	}
	if _, ok := tc.Config["base_url"]; !ok {
		tc.Config["base_url"], _ = json.Marshal(os.Args[2])
	}
	config, err := json.Marshal(tc.Config)
	if err != nil {
		die(err.Error())
	}

	out := json.NewEncoder(os.Stdout) // one Write per line: visible at once
	out.SetEscapeHTML(false)
	emit := func(line map[string]any) {
		if err := out.Encode(line); err != nil {
			die(err.Error())
		}
	}

	var tools []panto.Tool
	for _, ct := range tc.Tools {
		t, err := ct.tool()
		if err != nil {
			die(os.Args[1] + ": " + err.Error())
		}
		tools = append(tools, t)
	}

	printErrorDetail, printRequestIDs, printCosts = tc.PrintErrorDetail, tc.PrintRequestIDs, tc.PrintCosts
	caseApprovals = tc.Approvals
	caseSteers = tc.Steer
	r := &caseRun{config: config, tools: tools, extra: extra, emit: emit}
	agent, err := r.newAgent()
	if err != nil {
		emit(errorLine(err))
		return
	}
	r.agent = agent
	defer func() { r.agent.Close() }()
	for i, turn := range tc.Turns {
		agent := r.agent
		after := time.Duration(-1)
		if i == tc.CancelTurn {
			after = cancelAfter
		}
		var ok bool
		switch {
		case turn.step != nil:
			ok = r.runStep(*turn.step)
		case turn.final != "":
			ok = runFinal(agent, turn, extra, emit)
		case tc.EndEarly != nil && i == tc.EndEarly.Turn:
			ok = runTurnEndingEarly(agent, turn, *tc.EndEarly, extra, emit)
		default:
			ok = runTurn(agent, turn, extra, after, tc.OnError, emit)
		}
		if !ok {
			break
		}
	}
	agent = r.agent
	if tc.ExpectConnections != nil {
		counts, err := agent.Connections()
		if err != nil {
			emit(errorLine(err))
			return
		}
		emit(map[string]any{"event": "connections", "opened": counts.Opened, "reused": counts.Reused})
	}
	if tc.PrintConversation {
		conversation, err := agent.ConversationJSON()
		if err != nil {
			emit(errorLine(err))
			return
		}
		emit(map[string]any{"event": "conversation", "messages": conversation})
	}
}

// runTurn prints the lines of one turn; false stops the case. With cancelAfter >= 0, the
// turn's context is canceled that long after Run returned.
func runTurn(agent *panto.Agent, tn turn, extra int, cancelAfter time.Duration, onErr *onError,
	emit func(map[string]any)) bool {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := tn.run(ctx, agent)
	if err != nil && tn.resume {
		emit(codeLine("resume_turn", err, false))
		return true
	}
	if err != nil {
		emit(errorLine(err))
		return false
	}
	defer stream.Close()
	if cancelAfter >= 0 {
		timer := time.AfterFunc(cancelAfter, cancel)
		defer timer.Stop()
	}
	steerAfter(stream, "run", emit)
	for stream.Next() || answerApprovals(stream, emit) {
		if ev := stream.Event(); ev.Kind != 0 {
			emit(eventLine(ev))
			steerAfter(stream, ev.Kind.String(), emit)
		}
	}
	if err := stream.Err(); err != nil && onErr != nil {
		emit(errorLine(err))
		if onErr.SetConfig != nil {
			emit(map[string]any{"event": "set_config", "code": statusName(agent.SetConfigJSON(onErr.SetConfig))})
		}
		if onErr.Reopen {
			err := stream.Reopen(ctx)
			emit(map[string]any{"event": "reopen", "code": statusName(err)})
			if err == nil {
				for stream.Next() {
					emit(eventLine(stream.Event()))
				}
				emit(endLine(stream))
			}
		}
	} else {
		end := endLine(stream)
		emit(end)
		steerAfter(stream, end["event"].(string), emit)
	}
	extraNext(stream, extra, emit)
	return true
}

// extraNext prints the lines of the extra Next calls after a turn's end.
func extraNext(stream *panto.Stream, extra int, emit func(map[string]any)) {
	for range extra {
		if stream.Next() { // not sticky: show the event
			emit(eventLine(stream.Event()))
			continue
		}
		emit(endLine(stream))
	}
}

// endLine is the line of a stream that Next left: its error, or done.
func endLine(stream *panto.Stream) map[string]any {
	if err := stream.Err(); err != nil {
		return errorLine(err)
	}
	return map[string]any{"event": "done"}
}

// statusName is the name of the status a call returned: "ok", or its error code.
func statusName(err error) string {
	var perr *panto.Error
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &perr):
		return perr.Code.String()
	default:
		return "go_error: " + err.Error()
	}
}

func eventLine(ev panto.Event) map[string]any {
	line := map[string]any{"event": ev.Kind.String()}
	switch ev.Kind {
	case panto.EventMessageStart:
		line["id"] = ev.ID
		line["model"] = ev.Model
		if printRequestIDs {
			line["request_id"] = ev.RequestID
		}
	case panto.EventBlockStart:
		line["index"] = ev.Index
		line["kind"] = ev.BlockKind.String()
	case panto.EventContentDelta, panto.EventBlockComplete:
		line["index"] = ev.Index
		line["kind"] = ev.BlockKind.String()
		line["text"] = ev.Text
		if ev.Kind == panto.EventBlockComplete && ev.Name != "" { // a server block's type
			line["name"] = ev.Name
		}
		if ev.Citations != "" { // a text block's citations
			line["citations"] = ev.Citations
		}
	case panto.EventMessageEnd, panto.EventMessageComplete:
		line["stop_reason"] = ev.StopReason.String()
		line["provider_stop_reason"] = ev.ProviderStopReason
		line["usage"] = usageLine(ev.Usage)
		if printCosts {
			line["cost"] = nil
			if ev.Cost >= 0 {
				line["cost"] = ev.Cost
			}
		}
	case panto.EventToolDetails:
		line["index"] = ev.Index
		line["id"] = ev.ID
		line["name"] = ev.Name
	case panto.EventToolCallStart:
		line["id"] = ev.ID
		line["name"] = ev.Name
		if input := ev.Input(); json.Valid(input) {
			line["input"] = input
		} else { // not JSON: show the text in the diff
			line["input"] = ev.Text
		}
		line["awaiting_result"] = ev.AwaitingResult
	case panto.EventToolProgress:
		line["id"] = ev.ID
		line["name"] = ev.Name
		line["text"] = ev.Text
		line["fraction"] = nil
		if ev.Fraction >= 0 {
			line["fraction"] = ev.Fraction
		}
	case panto.EventToolResult:
		line["id"] = ev.ID
		line["name"] = ev.Name
		line["content"] = ev.Text
		line["is_error"] = ev.IsError
		line["parts"] = partLines(ev.Parts())
	case panto.EventCompactionStart:
		line["tokens_before"] = ev.TokensBefore
		line["reason"] = ev.Text
	case panto.EventCompactionEnd:
		line["tokens_before"] = ev.TokensBefore
		line["tokens_after"] = ev.TokensAfter
		line["message_count"] = ev.MessageCount
		line["summary"] = ev.Text
	case panto.EventUserMessage:
		line["source"] = ev.Source()
		line["text"] = ev.Text
	case panto.EventApprovalRequest:
		calls := []map[string]any{}
		for _, c := range ev.Approvals() {
			calls = append(calls, map[string]any{"id": c.ID, "name": c.Name, "input": c.Input})
		}
		line["calls"] = calls
	case panto.EventProviderRetry:
		line["attempt"] = ev.Attempt
		line["delay_ms"] = ev.Delay.Milliseconds()
		line["http_status"] = ev.HTTPStatus
		line["reason"] = ev.Text
	default: // a kind this driver does not know: show its number in the diff
		line["kind_value"] = int32(ev.Kind)
	}
	return line
}

func errorLine(err error) map[string]any {
	var perr *panto.Error
	if !errors.As(err, &perr) {
		return map[string]any{"event": "error", "code": "go_error", "http_status": 0,
			"type": "", "message": err.Error()}
	}
	line := map[string]any{"event": "error", "code": perr.Code.String(),
		"http_status": perr.HTTPStatus, "type": perr.Type, "message": perr.Message}
	if printErrorDetail {
		line["retry_after"] = nil
		if perr.RetryAfter != nil {
			line["retry_after"] = perr.RetryAfter.Seconds()
		}
		headers := perr.Headers
		if headers == nil {
			headers = map[string]string{}
		}
		line["headers"] = headers
	}
	return line
}

func die(msg string) {
	fmt.Fprintln(os.Stderr, "conformance-driver:", msg)
	os.Exit(2)
}
