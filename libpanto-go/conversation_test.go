package panto_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"panto.dev/panto"
)

// weatherTool answers every call with a fixed text.
func weatherTool() panto.Tool {
	return panto.Tool{
		Name: "get_weather", Description: "The weather in a city.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`),
		Handler: func(context.Context, json.RawMessage) (string, error) {
			return "Sunny, 21 °C", nil
		},
	}
}

// toolConversation runs a turn with a tool round: user, assistant (text and a tool call),
// user (the result), assistant (text).
func toolConversation(t *testing.T) *panto.Agent {
	t.Helper()
	loadScenario(t, scenario(
		toolUse("Let me look.", "call_1", "get_weather", map[string]any{"city": "Paris"}),
		textAnswer("Sunny in Paris."),
	))
	cfg := testConfig("anthropic")
	cfg.Tools = []panto.Tool{weatherTool()}
	agent := newAgent(t, cfg)
	runTurns(t, agent, "Weather in Paris?")
	return agent
}

func export(t *testing.T, agent *panto.Agent) []byte {
	t.Helper()
	doc, err := agent.Export()
	if err != nil {
		t.Fatalf("Export: %v", err)
	}
	return doc
}

func messageCount(t *testing.T, agent *panto.Agent) int {
	t.Helper()
	n, err := agent.MessageCount()
	if err != nil {
		t.Fatalf("MessageCount: %v", err)
	}
	return n
}

func TestExportImportRoundTripIsByteIdentical(t *testing.T) {
	agent := toolConversation(t)
	doc := export(t, agent)

	var top struct {
		Version  int             `json:"version"`
		Messages json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(doc, &top); err != nil || top.Version != 1 {
		t.Fatalf("Export = %s (%v), want a version 1 document", doc, err)
	}
	conv, err := agent.ConversationJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(top.Messages, conv) {
		t.Fatalf("the export's messages differ from ConversationJSON:\n%s\n%s", top.Messages, conv)
	}

	other := newAgent(t, testConfig("openai"))
	if err := other.Import(doc); err != nil {
		t.Fatalf("Import: %v", err)
	}
	if again := export(t, other); !bytes.Equal(again, doc) {
		t.Fatalf("export -> import -> export changed the bytes:\n%s\n%s", doc, again)
	}
	if n := messageCount(t, other); n != 4 {
		t.Fatalf("MessageCount after Import = %d, want 4", n)
	}
}

func TestConversationCarriesEachAssistantMessagesMetadata(t *testing.T) {
	msgs := conversation(t, toolConversation(t))
	if len(msgs) != 4 {
		t.Fatalf("%d messages, want 4", len(msgs))
	}
	call := msgs[1]
	if call.Role != "assistant" || call.Provider != "anthropic" || call.Model != "test-model" ||
		call.StopReason != panto.StopToolUse || call.Usage == nil || call.Usage.InputTokens != 20 ||
		call.Usage.OutputTokens != 7 {
		t.Fatalf("the tool-calling message = %+v (usage %+v)", call, call.Usage)
	}
	if c := call.Content[1]; c.Type != "tool_call" || c.ID != "call_1" || c.Name != "get_weather" {
		t.Fatalf("its second block = %+v", c)
	}
	if r := msgs[2]; r.Role != "user" || r.Provider != "" || r.Usage != nil || r.Content[0].Content != "Sunny, 21 °C" {
		t.Fatalf("the result message = %+v", r)
	}
	if last := msgs[3]; last.StopReason != panto.StopEndTurn || last.Usage == nil || last.Usage.InputTokens != 12 {
		t.Fatalf("the last message = %+v", last)
	}
}

func TestImportRefusesBadDocumentsAndChangesNothing(t *testing.T) {
	agent := toolConversation(t)
	before := export(t, agent)
	for _, tc := range []struct {
		name, doc, message string
	}{
		{"not JSON", `{"version": 1, "messages": [`, ""},
		{"another version", `{"version": 2, "messages": []}`, "unsupported conversation version 2"},
		{"an unknown role", `{"version": 1, "messages": [{"role": "system", "content": [{"type": "text", "text": "x"}]}]}`, "messages[0]"},
		{"a result answering no call", `{"version": 1, "messages": [{"role": "user", "content": [
			{"type": "tool_result", "id": "call_9", "content": "x", "is_error": false}]}]}`, "call_9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			perr := asPantoError(t, agent.Import([]byte(tc.doc)), panto.ErrConversation)
			if !strings.Contains(perr.Message, tc.message) || perr.Message == "" {
				t.Errorf("Message = %q, want it to name %q", perr.Message, tc.message)
			}
			if after := export(t, agent); !bytes.Equal(after, before) {
				t.Fatalf("a refused Import changed the conversation:\n%s", after)
			}
		})
	}
}

// A turn that fails before any answer takes its user message back out, so that the next
// request does not carry two user messages in a row; RollbackTurn then finds nothing.
func TestAFailedTurnLeavesNothing(t *testing.T) {
	loadScenario(t, scenario(providerError(400, "invalid_request_error", "no"), textAnswer("Hi!")))
	cfg := testConfig("anthropic")
	cfg.Retry = &panto.RetryPolicy{MaxRetries: panto.NoRetries}
	agent := newAgent(t, cfg)
	stream := run(t, agent, "first try")
	nextAll(stream)
	asPantoError(t, stream.Err(), panto.ErrInvalidRequest)
	stream.Close()
	if n := messageCount(t, agent); n != 0 {
		t.Fatalf("after the failed turn: %d messages, want 0 (rolled back)", n)
	}
	if removed, err := agent.RollbackTurn(); removed != 0 || err != nil {
		t.Fatalf("RollbackTurn() = %d, %v; want 0, nil", removed, err)
	}
	runTurns(t, agent, "second try")
	if got := requestMessages(t, 1); len(got) != 1 || !strings.Contains(got[0], "second try") {
		t.Fatalf("the next request's messages = %v, want the second try alone", got)
	}
}

func TestTruncateAndDropLastRefusalsChangeNothing(t *testing.T) {
	agent := toolConversation(t)
	before := export(t, agent)
	for _, tc := range []struct {
		name string
		call func() error
		code panto.Code
	}{
		{"Truncate past the end", func() error { return agent.Truncate(5) }, panto.ErrInvalidArgument},
		{"Truncate negative", func() error { return agent.Truncate(-1) }, panto.ErrInvalidArgument},
		{"DropLast past the start", func() error { return agent.DropLast(5) }, panto.ErrInvalidArgument},
		{"DropLast negative", func() error { return agent.DropLast(-1) }, panto.ErrInvalidArgument},
		// Keeping the tool call without its result.
		{"Truncate between a call and its result", func() error { return agent.Truncate(2) }, panto.ErrConversation},
		{"DropLast between a call and its result", func() error { return agent.DropLast(2) }, panto.ErrConversation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asPantoError(t, tc.call(), tc.code)
			if after := export(t, agent); !bytes.Equal(after, before) {
				t.Fatalf("a refused edit changed the conversation:\n%s", after)
			}
		})
	}

	if err := agent.Truncate(1); err != nil {
		t.Fatalf("Truncate(1): %v", err)
	}
	if msgs := conversation(t, agent); len(msgs) != 1 || msgs[0].Content[0].Text != "Weather in Paris?" {
		t.Fatalf("after Truncate(1): %+v", msgs)
	}
}

func TestEditsAreRefusedWhileAStreamRuns(t *testing.T) {
	loadScenario(t, scenario(textAnswer("Hi!")))
	agent := newAgent(t, testConfig("anthropic"))
	stream := run(t, agent, "Hello")
	doc := []byte(`{"version": 1, "messages": []}`)
	for name, call := range map[string]func() error{
		"Truncate": func() error { return agent.Truncate(0) },
		"DropLast": func() error { return agent.DropLast(1) },
		"Import":   func() error { return agent.Import(doc) },
		"Compact":  func() error { _, err := agent.Compact(context.Background()); return err },
	} {
		asPantoError(t, call(), panto.ErrBusy)
		if n := messageCount(t, agent); n != 1 {
			t.Fatalf("%s while the stream runs: %d messages, want 1", name, n)
		}
	}
	stream.Close()
	if err := agent.Truncate(0); err != nil {
		t.Fatalf("Truncate once the stream is closed: %v", err)
	}
	if n := messageCount(t, agent); n != 0 {
		t.Fatalf("after Truncate(0): %d messages", n)
	}
}

func TestClosedAgentRefusesConversationCalls(t *testing.T) {
	agent := newAgent(t, testConfig("anthropic"))
	agent.Close()
	if _, err := agent.Export(); !errors.Is(err, panto.ErrClosed) {
		t.Errorf("Export: %v", err)
	}
	if err := agent.Import([]byte(`{"version": 1, "messages": []}`)); !errors.Is(err, panto.ErrClosed) {
		t.Errorf("Import: %v", err)
	}
	if _, err := agent.MessageCount(); !errors.Is(err, panto.ErrClosed) {
		t.Errorf("MessageCount: %v", err)
	}
	if err := agent.DropLast(0); !errors.Is(err, panto.ErrClosed) {
		t.Errorf("DropLast: %v", err)
	}
	if _, err := agent.Compact(context.Background()); !errors.Is(err, panto.ErrClosed) {
		t.Errorf("Compact: %v", err)
	}
}

func TestServerBlocksComeAsTheirTypeAndJSON(t *testing.T) {
	// A block panto keeps as the provider sent it: its type in Name, its JSON kept as a string.
	const raw = `{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","title":"Zig","url":"https://ziglang.org","encrypted_content":"Eqg=","page_age":null}]}`
	quoted, _ := json.Marshal(raw)
	doc := `{"version":1,"messages":[{"role":"user","content":[{"type":"text","text":"Search."}]},` +
		`{"role":"assistant","content":[{"type":"server_block","name":"web_search_tool_result","json":` + string(quoted) +
		`},{"type":"text","text":"Found."}],` +
		`"provider":"anthropic","model":"test-model","stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1,"cache_read_tokens":0,"cache_write_tokens":0,"reasoning_tokens":0}}]}`
	agent := newAgent(t, testConfig("anthropic"))
	if err := agent.Import([]byte(doc)); err != nil {
		t.Fatalf("Import: %v", err)
	}
	if again := export(t, agent); string(again) != doc {
		t.Fatalf("export -> import -> export changed the bytes:\n%s\n%s", doc, again)
	}
	c := conversation(t, agent)[1].Content[0]
	if c.Type != "server_block" || c.Name != "web_search_tool_result" || c.JSON != raw {
		t.Fatalf("the server block = %+v", c)
	}
}

func TestConversationKeepsAnAssistantMessagesContainerAndReasoningDetails(t *testing.T) {
	agent := newAgent(t, testConfig("anthropic"))
	doc := []byte(`{"version":1,"messages":[{"role":"user","content":[{"type":"text","text":"Run it."}]},` +
		`{"role":"assistant","content":[{"type":"text","text":"Ran."}],"provider":"anthropic","model":"claude-test",` +
		`"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1,"cache_read_tokens":0,"cache_write_tokens":0,"reasoning_tokens":0},` +
		`"container":"container_011CRx","reasoning_details":"[{\"type\":\"reasoning.text\",\"text\":\"x\"}]"}]}`)
	if err := agent.Import(doc); err != nil {
		t.Fatalf("Import: %v", err)
	}
	msgs, err := agent.Conversation()
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[1].Container != "container_011CRx" || msgs[1].ReasoningDetails != `[{"type":"reasoning.text","text":"x"}]` {
		t.Fatalf("Conversation()[1] = %+v, want its container and reasoning_details", msgs[1])
	}
}
