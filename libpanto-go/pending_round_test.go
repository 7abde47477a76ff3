package panto_test

// A tool round left waiting for a person (issue 36) through the Go API: a stream closed while
// a call waits leaves the round to the agent (PendingRound), ResumeTurn goes on with it; a
// session keeps it for the next agent.

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"panto.dev/panto"
)

func roundAnswer() map[string]any {
	return map[string]any{"message": map[string]any{
		"content": []any{
			map[string]any{"type": "tool_use", "id": "toolu_1", "name": "delete_file", "input": map[string]any{"path": "notes.txt"}},
			map[string]any{"type": "tool_use", "id": "toolu_2", "name": "list_files", "input": map[string]any{}},
		},
		"stop_reason": "tool_use",
	}}
}

// roundTools: delete_file asks first; both count their runs.
func roundTools(deletes, lists *atomic.Int32) []panto.Tool {
	return []panto.Tool{
		{Name: "delete_file", NeedsApproval: true,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`),
			Handler: func(ctx context.Context, input json.RawMessage) (string, error) {
				deletes.Add(1)
				return "deleted", nil
			}},
		{Name: "list_files", Handler: func(ctx context.Context, input json.RawMessage) (string, error) {
			lists.Add(1)
			return "notes.txt", nil
		}},
	}
}

// readUntilApproval reads the stream until it waits for an answer.
func readUntilApproval(t *testing.T, stream *panto.Stream) []panto.Event {
	t.Helper()
	var events []panto.Event
	for stream.Next() { // (not Iter: it closes the stream at its end)
		events = append(events, stream.Event())
	}
	if !errors.Is(stream.Err(), panto.ErrApprovalPending) {
		t.Fatalf("Err() = %v, want ErrApprovalPending", stream.Err())
	}
	return events
}

func TestResumeTurnGoesOnWithTheRoundAClosedStreamLeft(t *testing.T) {
	var deletes, lists atomic.Int32
	agent, err := emulatorAgent(panto.Config{Tools: roundTools(&deletes, &lists)}, roundAnswer(), textAnswer("Done."))
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	stream, err := agent.Run(context.Background(), "Clean up")
	if err != nil {
		t.Fatal(err)
	}
	readUntilApproval(t, stream)
	stream.Close()

	pending, err := agent.PendingRound()
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 2 || pending[0].ID != "toolu_1" || pending[0].State != panto.PendingAsk ||
		pending[0].Name != "delete_file" || string(pending[0].Input) != `{"path":"notes.txt"}` ||
		pending[1].State != panto.PendingAnswered {
		t.Fatalf("PendingRound() = %+v", pending)
	}

	resumed, err := agent.ResumeTurn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	events := readUntilApproval(t, resumed)
	if len(events) == 0 || events[0].Kind != panto.EventApprovalRequest {
		t.Fatalf("the resumed stream begins with %v, want its approval request", events)
	}
	if err := resumed.Approve("toolu_1"); err != nil {
		t.Fatal(err)
	}
	msg, err := resumed.FinalMessage()
	if err != nil || msg.Text() != "Done." {
		t.Fatalf("FinalMessage() = %v, %v", msg, err)
	}
	resumed.Close()
	if deletes.Load() != 1 || lists.Load() != 1 {
		t.Fatalf("delete_file ran %d times, list_files %d: want once each", deletes.Load(), lists.Load())
	}
	if pending, err := agent.PendingRound(); err != nil || pending != nil {
		t.Fatalf("PendingRound() after the turn = %v, %v, want none", pending, err)
	}
	if _, err := agent.ResumeTurn(context.Background()); !errors.Is(err, panto.ErrState) {
		t.Fatalf("ResumeTurn with nothing pending: %v, want ErrState", err)
	}
}

func TestASessionKeepsThePendingRoundForTheNextAgent(t *testing.T) {
	var deletes, lists atomic.Int32
	dir := t.TempDir()
	cfg := panto.Config{Tools: roundTools(&deletes, &lists), Session: &panto.Session{Dir: dir, ID: "s1"}}
	agent, err := emulatorAgent(cfg, roundAnswer(), textAnswer("Kept."))
	if err != nil {
		t.Fatal(err)
	}
	stream, err := agent.Run(context.Background(), "Clean up")
	if err != nil {
		t.Fatal(err)
	}
	readUntilApproval(t, stream)
	stream.Close()
	agent.Close()

	cfg.Model, cfg.BaseURL, cfg.APIKey, cfg.Provider = "claude-sonnet-4-5", emulatorURL, "test-key", "anthropic"
	next, err := panto.NewAgent(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	pending, err := next.PendingRound()
	if err != nil || len(pending) != 2 || pending[0].State != panto.PendingAsk {
		t.Fatalf("PendingRound() of the next agent = %+v, %v", pending, err)
	}
	resumed, err := next.ResumeTurn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	readUntilApproval(t, resumed)
	if err := resumed.Deny("toolu_1", "keep it"); err != nil {
		t.Fatal(err)
	}
	var results []string
	for ev := range resumed.Iter {
		if ev.Kind == panto.EventToolResult {
			results = append(results, ev.Text)
		}
	}
	resumed.Close()
	if len(results) != 2 || results[0] != "The user denied this call: keep it" || results[1] != "notes.txt" {
		t.Fatalf("results %q", results)
	}
	if deletes.Load() != 0 || lists.Load() != 1 {
		t.Fatalf("delete_file ran %d times, list_files %d: want 0 and 1", deletes.Load(), lists.Load())
	}
}

func TestAnApprovalFuncAnswersTheCallsAsTheyAreAsked(t *testing.T) {
	var deletes, lists atomic.Int32
	var asked []string
	cfg := panto.Config{Tools: roundTools(&deletes, &lists),
		Approve: func(ctx context.Context, call panto.ApprovalCall) (bool, string) {
			asked = append(asked, call.ID+" "+call.Name+" "+string(call.Input))
			return false, "not on Sundays"
		}}
	agent, err := emulatorAgent(cfg, roundAnswer(), textAnswer("Understood."))
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	stream, err := agent.Run(context.Background(), "Clean up")
	if err != nil {
		t.Fatal(err)
	}
	var results []string
	for ev := range stream.Iter {
		if ev.Kind == panto.EventToolResult {
			results = append(results, ev.Text)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("Err() = %v: the function answered, nothing was left pending", err)
	}
	if len(asked) != 1 || asked[0] != `toolu_1 delete_file {"path":"notes.txt"}` {
		t.Fatalf("the function was asked %q", asked)
	}
	if len(results) != 2 || results[0] != "The user denied this call: not on Sundays" || results[1] != "notes.txt" {
		t.Fatalf("results %q", results)
	}
	if deletes.Load() != 0 || lists.Load() != 1 {
		t.Fatalf("delete_file ran %d times, list_files %d: want 0 and 1", deletes.Load(), lists.Load())
	}
}

func TestAnApprovalFuncThatPanicsDeniesTheCall(t *testing.T) {
	var deletes, lists atomic.Int32
	cfg := panto.Config{Tools: roundTools(&deletes, &lists),
		Approve: func(ctx context.Context, call panto.ApprovalCall) (bool, string) { panic("no policy today") }}
	agent, err := emulatorAgent(cfg, roundAnswer(), textAnswer("Understood."))
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	msg, err := agent.Complete(context.Background(), "Clean up")
	if err != nil || msg.Text() != "Understood." {
		t.Fatalf("Complete() = %v, %v", msg, err)
	}
	conv, err := agent.Conversation()
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(conv)
	if !strings.Contains(string(js), "the approval function panicked: no policy today") || deletes.Load() != 0 {
		t.Fatalf("the conversation %s (delete_file ran %d times)", js, deletes.Load())
	}
}
