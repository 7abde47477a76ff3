package panto_test

// Steering and follow-ups (issue 36) through the Go API: a follow-up runs the stream's next
// turn after the first's EventMessageComplete, Iter goes on through it, and a message after
// the stream is over is refused.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"panto.dev/panto"
)

func TestContinueAnswersAnImportedConversation(t *testing.T) {
	agent, err := emulatorAgent(panto.Config{}, textAnswer("Answered."))
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	if _, err := agent.Continue(context.Background()); !errors.Is(err, panto.ErrConversation) {
		t.Fatalf("Continue with nothing to answer: %v, want ErrConversation", err)
	}
	doc := []byte(`{"version":1,"messages":[{"role":"user","content":[{"type":"text","text":"Imported question"}]}]}`)
	if err := agent.Import(doc); err != nil {
		t.Fatal(err)
	}
	stream, err := agent.Continue(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	msg, err := stream.FinalMessage()
	if err != nil || msg.Text() != "Answered." {
		t.Fatalf("FinalMessage() = %v, %v", msg, err)
	}
	stream.Close()
	conv, err := agent.Conversation()
	if err != nil || len(conv) != 2 {
		t.Fatalf("%d messages (%v), want 2", len(conv), err)
	}
}

func TestFollowUpRunsTheStreamsNextTurn(t *testing.T) {
	agent, err := emulatorAgent(panto.Config{}, textAnswer("One."), textAnswer("Two."))
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	stream, err := agent.Run(context.Background(), "Count")
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.FollowUp(""); !errors.Is(err, panto.ErrInvalidArgument) {
		t.Fatalf("an empty follow-up: %v, want ErrInvalidArgument", err)
	}
	var kinds []panto.EventKind
	var said []string
	for ev := range stream.Iter {
		kinds = append(kinds, ev.Kind)
		if ev.Kind == panto.EventMessageStart && len(kinds) == 1 {
			// From another goroutine while this one reads: queued, taken at the turn's end.
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { defer wg.Done(); _ = stream.FollowUp("And on?") }()
			wg.Wait()
		}
		if ev.Kind == panto.EventUserMessage {
			said = append(said, ev.Source()+": "+ev.Text)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	completes := 0
	for _, k := range kinds {
		if k == panto.EventMessageComplete {
			completes++
		}
	}
	if completes != 2 || fmt.Sprint(said) != "[follow_up: And on?]" {
		t.Fatalf("completes %d, user messages %v; want 2, [follow_up: And on?]", completes, said)
	}
	if err := stream.Steer("too late"); !errors.Is(err, panto.ErrState) && !errors.Is(err, panto.ErrClosed) {
		t.Fatalf("a steer after the stream: %v, want ErrState or ErrClosed", err)
	}
	conv, err := agent.Conversation()
	if err != nil {
		t.Fatal(err)
	}
	if len(conv) != 4 {
		t.Fatalf("%d messages, want 4", len(conv))
	}
}
