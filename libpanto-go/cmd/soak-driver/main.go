// Command soak-driver is the Go cancel-soak driver: `soak-driver CONFIG_JSON TOOL_JSON`.
//
// It speaks the line protocol of tests/soak/README.md on stdin/stdout: one agent, turns
// canceled through their context from a timer (time.AfterFunc) after a given delay, the
// tool's handler sleeping a given time, one JSON reply a line.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"panto.dev/panto"
)

type driver struct {
	config    []byte
	tool      panto.Tool
	agent     *panto.Agent
	toolSleep time.Duration
}

func (d *driver) newAgent() map[string]any {
	if d.agent != nil {
		d.agent.Close()
	}
	agent, err := panto.NewAgentJSON(d.config)
	if err != nil {
		die(err.Error())
	}
	if err := agent.AddTool(d.tool); err != nil {
		die(err.Error())
	}
	d.agent = agent
	return map[string]any{"ok": true}
}

func (d *driver) lookup(ctx context.Context, input json.RawMessage) (string, error) {
	// A handler slow enough for a cancel to land in it; it ends early when the turn does.
	select {
	case <-time.After(d.toolSleep):
	case <-ctx.Done():
	}
	return "found " + string(input), nil
}

func (d *driver) setConfig(changes string) map[string]any {
	if err := d.agent.SetConfigJSON([]byte(changes)); err != nil {
		return map[string]any{"ok": false, "code": code(err), "message": err.Error()}
	}
	return map[string]any{"ok": true}
}

func (d *driver) turn(cancelAfter time.Duration, toolSleep time.Duration, text string) map[string]any {
	d.toolSleep = toolSleep
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := d.agent.Run(ctx, text)
	if err != nil {
		die(err.Error())
	}
	if cancelAfter >= 0 {
		timer := time.AfterFunc(cancelAfter, cancel)
		defer timer.Stop()
	}
	events := []string{}
	texts := []string{}
	var seen strings.Builder
	for stream.Next() {
		ev := stream.Event()
		events = append(events, ev.Kind.String())
		if ev.BlockKind == panto.BlockText && ev.Kind == panto.EventContentDelta {
			seen.WriteString(ev.Text)
		} else if ev.BlockKind == panto.BlockText && ev.Kind == panto.EventBlockComplete {
			texts = append(texts, ev.Text)
		}
	}
	end, message := "done", ""
	if err := stream.Err(); err != nil {
		end, message = code(err), err.Error()
	}
	stream.Close()
	conversation, err := d.agent.ConversationJSON()
	if err != nil {
		die(err.Error())
	}
	return map[string]any{"end": end, "message": message, "events": events,
		"seen_text": seen.String(), "texts": texts, "conversation": conversation}
}

func code(err error) string {
	var perr *panto.Error
	if errors.As(err, &perr) {
		return perr.Code.String()
	}
	return "go_error: " + err.Error()
}

func main() {
	if len(os.Args) != 3 {
		die("usage: soak-driver CONFIG_JSON TOOL_JSON")
	}
	var spec struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	if err := json.Unmarshal([]byte(os.Args[2]), &spec); err != nil {
		die(err.Error())
	}
	d := &driver{config: []byte(os.Args[1])}
	d.tool = panto.Tool{Name: spec.Name, Description: spec.Description, InputSchema: spec.InputSchema, Handler: d.lookup}

	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<16), 1<<20)
	out := json.NewEncoder(os.Stdout)
	out.SetEscapeHTML(false)
	for in.Scan() {
		op, rest, _ := strings.Cut(in.Text(), " ")
		var reply map[string]any
		switch op {
		case "agent":
			reply = d.newAgent()
		case "config":
			reply = d.setConfig(rest)
		case "connections":
			counts, err := d.agent.Connections()
			if err != nil {
				die(err.Error())
			}
			reply = map[string]any{"opened": counts.Opened, "reused": counts.Reused}
		case "turn":
			f := strings.SplitN(rest, " ", 4)
			if len(f) != 4 {
				die("bad turn line")
			}
			cancelUs, err1 := strconv.Atoi(f[0])
			sleepUs, err2 := strconv.Atoi(f[1])
			pad, err3 := strconv.Atoi(f[2])
			if err := errors.Join(err1, err2, err3); err != nil {
				die(err.Error())
			}
			after := time.Duration(-1)
			if cancelUs >= 0 {
				after = time.Duration(cancelUs) * time.Microsecond
			}
			reply = d.turn(after, time.Duration(sleepUs)*time.Microsecond, f[3]+strings.Repeat("x", pad))
		default:
			die("unknown command " + op)
		}
		if err := out.Encode(reply); err != nil {
			die(err.Error())
		}
	}
	if d.agent != nil {
		d.agent.Close()
	}
}

func die(msg string) {
	fmt.Fprintln(os.Stderr, "soak-driver:", msg)
	os.Exit(2)
}
