package panto_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"panto.dev/panto"
)

// answerWithUsage is a text answer reporting inputTokens of context.
func answerWithUsage(text string, inputTokens int) map[string]any {
	a := textAnswer(text)
	a["message"].(map[string]any)["usage"] = map[string]any{"input_tokens": inputTokens, "output_tokens": 3}
	return a
}

// compactingConfig keeps only the last message out of a summary, and compacts past 900
// tokens.
func compactingConfig() panto.Config {
	cfg := testConfig("anthropic")
	cfg.Retry = &panto.RetryPolicy{MaxRetries: panto.NoRetries}
	cfg.Compaction = &panto.Compaction{ContextWindow: 1000, ReserveTokens: 100, KeepRecentTokens: 1,
		Prompt: "Summarize the conversation."}
	return cfg
}

func TestCompactSummarizesTheOlderMessages(t *testing.T) {
	loadScenario(t, scenario(textAnswer("Hi!"), textAnswer("They said hello.")))
	agent := newAgent(t, compactingConfig())
	runTurns(t, agent, "Hello")

	stream, err := agent.Compact(context.Background())
	if err != nil {
		t.Fatalf("Compact: %v", err)
	}
	events := collect(t, stream)
	if err := stream.Err(); err != nil {
		t.Fatalf("the compaction failed: %v", err)
	}
	if len(events) != 3 || events[0].Kind != panto.EventCompactionStart ||
		events[1].Kind != panto.EventCompactionEnd || events[2].Kind != panto.EventMessageComplete {
		t.Fatalf("events = %+v, want CompactionStart, CompactionEnd, MessageComplete", events)
	}
	start, end, complete := events[0], events[1], events[2]
	if start.Text != "manual" || start.TokensBefore <= 0 {
		t.Errorf("CompactionStart = %+v", start)
	}
	if end.MessageCount != 1 || end.Text != "They said hello." || end.TokensBefore != start.TokensBefore ||
		end.TokensAfter <= 0 {
		t.Errorf("CompactionEnd = %+v", end)
	}
	if complete.StopReason != panto.StopEndTurn || complete.Usage.OutputTokens != 3 {
		t.Errorf("MessageComplete = %+v, want the summary request's", complete)
	}

	// The summary request: the prompt as system, the conversation in one user message.
	body := requestBody(t, 1)
	if sys, _ := json.Marshal(body["system"]); !strings.Contains(string(sys), "Summarize the conversation.") {
		t.Errorf("the summary request's system = %s", sys)
	}
	if msgs := requestMessages(t, 1); len(msgs) != 1 || !strings.Contains(msgs[0], "[User]: Hello") {
		t.Errorf("the summary request's messages = %v", msgs)
	}

	msgs := conversation(t, agent)
	if len(msgs) != 2 || msgs[0].Role != "user" || msgs[0].Compaction == nil ||
		msgs[0].Compaction.MessageCount != 1 || !strings.Contains(msgs[0].Content[0].Text, "They said hello.") ||
		msgs[1].Content[0].Text != "Hi!" {
		t.Fatalf("the conversation after Compact = %+v", msgs)
	}
}

func TestCompactWithNothingToCompactIsAStateError(t *testing.T) {
	agent := newAgent(t, compactingConfig())
	if _, err := agent.Compact(context.Background()); err == nil {
		t.Fatal("Compact of an empty conversation succeeded")
	} else {
		asPantoError(t, err, panto.ErrState)
	}
}

func TestFailedCompactionLeavesTheConversation(t *testing.T) {
	loadScenario(t, scenario(textAnswer("Hi!"), providerError(500, "api_error", "down")))
	agent := newAgent(t, compactingConfig())
	runTurns(t, agent, "Hello")
	before := export(t, agent)

	stream, err := agent.Compact(context.Background())
	if err != nil {
		t.Fatalf("Compact: %v", err)
	}
	collect(t, stream)
	asPantoError(t, stream.Err(), panto.ErrServer)
	if after := export(t, agent); !bytes.Equal(after, before) {
		t.Fatalf("a failed compaction changed the conversation:\n%s\n%s", before, after)
	}
}

// A turn whose context the last usage puts past the window less the reserve compacts
// before its request, and the request carries the summary instead of the older messages.
func TestTurnCompactsPastTheThreshold(t *testing.T) {
	loadScenario(t, scenario(answerWithUsage("Hi!", 5000), textAnswer("They greeted."), textAnswer("Fine.")))
	agent := newAgent(t, compactingConfig())
	runTurns(t, agent, "Hello")

	events := collect(t, run(t, agent, "How are you?"))
	if len(events) < 3 || events[0].Kind != panto.EventCompactionStart || events[1].Kind != panto.EventCompactionEnd ||
		events[2].Kind != panto.EventMessageStart {
		t.Fatalf("events = %+v, want the compaction before the message", events)
	}
	if events[0].Text != "threshold" || events[0].TokensBefore < 5000 || events[1].MessageCount != 2 {
		t.Errorf("compaction events = %+v, %+v", events[0], events[1])
	}
	msgs := requestMessages(t, 2)
	// (one user message: Anthropic takes no two in a row)
	if len(msgs) != 1 || !strings.Contains(msgs[0], "They greeted.") || !strings.Contains(msgs[0], "How are you?") {
		t.Fatalf("the turn's request carries %v, want the summary and the new message in one", msgs)
	}
	if conv := conversation(t, agent); len(conv) != 3 || conv[0].Compaction == nil {
		t.Fatalf("the conversation = %+v, want the summary, the user message and the answer", conv)
	}
}

func TestDisabledCompactionSendsTheRequestAsItIs(t *testing.T) {
	loadScenario(t, scenario(answerWithUsage("Hi!", 5000), textAnswer("Fine.")))
	cfg := compactingConfig()
	cfg.Compaction.Disabled = true
	agent := newAgent(t, cfg)
	runTurns(t, agent, "Hello", "How are you?")
	if msgs := requestMessages(t, 1); len(msgs) != 3 {
		t.Fatalf("the second request carries %d messages, want all 3", len(msgs))
	}
}
