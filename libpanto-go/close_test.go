package panto_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"panto.dev/panto"
)

// Tests of the close policy (include/panto.h), the library's: however a turn ends early —
// a break out of Iter, a forgotten stream the collector frees, a Close from another
// goroutine while Iter waits — the conversation keeps what the program saw of the message,
// marked aborted, and the agent runs the next turn.

// wholeAnswer is the stalled answer sent whole: "Hello " and "world" arrive together, so a
// batch read ahead of the program holds the events after "Hello ".
func wholeAnswer(provider string) map[string]any {
	answer := stalledAnswer(provider)
	delete(answer, "fault")
	return answer
}

// readToHello reads the turn with Next up to the delta "Hello ", after which the batch
// read ahead still holds "world".
func readToHello(t *testing.T, stream *panto.Stream) {
	t.Helper()
	if !stream.Next() || stream.Event().Kind != panto.EventMessageStart {
		t.Fatalf("first event %+v, %v", stream.Event(), stream.Err())
	}
	time.Sleep(100 * time.Millisecond) // the rest arrives: the next batch holds it all
	for stream.Next() {
		if ev := stream.Event(); ev.Kind == panto.EventContentDelta {
			if ev.Text != "Hello " {
				t.Fatalf("first delta %q", ev.Text)
			}
			return
		}
	}
	t.Fatalf("the turn ended before its first delta: %v", stream.Err())
}

// checkClosedTurn checks the error of a turn that Close ended.
func checkClosedTurn(t *testing.T, err error) {
	t.Helper()
	asPantoError(t, err, panto.ErrCanceled)
	if !errors.Is(err, panto.ErrClosed) {
		t.Fatalf("err = %v, want it to match ErrClosed too", err)
	}
}

func TestBreakKeepsWhatWasSeen(t *testing.T) {
	for _, provider := range []string{"anthropic", "openai"} {
		t.Run(provider, func(t *testing.T) {
			loadScenario(t, scenario(wholeAnswer(provider), textAnswer("Again")))
			agent := newAgent(t, stallConfig(provider))
			stream := run(t, agent, "Hi")
			for ev := range stream.Iter {
				if ev.Kind == panto.EventMessageStart {
					time.Sleep(100 * time.Millisecond) // the rest arrives: the next batch holds it all
				}
				if ev.Kind == panto.EventContentDelta {
					if ev.Text != "Hello " {
						t.Fatalf("first delta %q", ev.Text)
					}
					break
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatalf("Err after break = %v, want nil", err)
			}
			if stream.Next() {
				t.Fatalf("Next after break: %+v", stream.Event())
			}
			checkClosedTurn(t, stream.Err())
			checkAborted(t, agent)
			checkNextTurnCarries(t, agent, 1)
		})
	}
}

func TestForgottenStreamKeepsWhatWasSeen(t *testing.T) {
	loadScenario(t, scenario(wholeAnswer("anthropic"), textAnswer("Again")))
	agent := newAgent(t, stallConfig("anthropic"))
	func() {
		stream, err := agent.Run(context.Background(), "Hi")
		if err != nil {
			t.Fatal(err)
		}
		readToHello(t, stream) // then unreachable, never closed
	}()
	deadline := time.Now().Add(10 * time.Second)
	for len(conversation(t, agent)) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the unreachable stream was never freed")
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	checkAborted(t, agent)
	checkNextTurnCarries(t, agent, 1)
}

func TestCloseWhileIterWaits(t *testing.T) {
	loadScenario(t, scenario(stalledAnswer("anthropic"), textAnswer("Again")))
	agent := newAgent(t, stallConfig("anthropic"))
	stream := run(t, agent, "Hi")
	ended := make(chan []string)
	go func() {
		var kinds []string
		for ev := range stream.Iter {
			kinds = append(kinds, ev.Kind.String())
			if ev.Kind == panto.EventContentDelta { // the next Next waits on the stall
				time.AfterFunc(50*time.Millisecond, func() { stream.Close() })
			}
		}
		ended <- kinds
	}()
	select {
	case kinds := <-ended:
		if len(kinds) != 3 || kinds[2] != "content_delta" {
			t.Fatalf("events %v, want message_start, block_start, content_delta", kinds)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Iter did not end after Close")
	}
	checkClosedTurn(t, stream.Err())
	checkAborted(t, agent)
	checkNextTurnCarries(t, agent, 1)
}

// Close after the end of a turn changes nothing.
func TestCloseAfterTheTurnKeepsItWhole(t *testing.T) {
	loadScenario(t, scenario(textAnswer("Hello world")))
	agent := newAgent(t, testConfig("anthropic"))
	stream := run(t, agent, "Hi")
	for range stream.Iter {
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	stream.Close()
	if stream.Next() || stream.Err() != nil {
		t.Fatalf("Next after the end and Close: Err %v, want nil", stream.Err())
	}
	conv := conversation(t, agent)
	if len(conv) != 2 || conv[1].StopReason != panto.StopEndTurn || conv[1].Content[0].Text != "Hello world" {
		t.Fatalf("conversation = %s", mustJSON(t, conv))
	}
}

// A Close from another goroutine at any moment of a fast turn — while Iter hands out the
// events read ahead, or while its Next is in the library — ends Iter, and the conversation
// keeps exactly the deltas Iter yielded: none given back is kept, none yielded is lost.
func TestCloseRacingIterKeepsWhatWasSeen(t *testing.T) {
	var deltas []any
	var whole strings.Builder
	for i := range 300 {
		d := fmt.Sprintf("w%03d ", i)
		deltas = append(deltas, d)
		whole.WriteString(d)
	}
	answer := textAnswer(whole.String())
	answer["message"].(map[string]any)["content"].([]any)[0].(map[string]any)["deltas"] = deltas
	for i := range 30 {
		loadScenario(t, scenario(answer))
		agent := newAgent(t, testConfig("anthropic"))
		stream := run(t, agent, "Hi")
		ended := make(chan string)
		go func() {
			var seen strings.Builder
			for ev := range stream.Iter {
				if ev.Kind == panto.EventContentDelta {
					seen.WriteString(ev.Text)
				}
			}
			ended <- seen.String()
		}()
		time.AfterFunc(time.Duration(i%10)*300*time.Microsecond, func() { stream.Close() })
		var seen string
		select {
		case seen = <-ended:
		case <-time.After(10 * time.Second):
			t.Fatal("Iter did not end after Close")
		}
		conv := conversation(t, agent)
		var kept string
		if len(conv) == 2 {
			for _, b := range conv[1].Content {
				kept += b.Text
			}
		}
		switch err := stream.Err(); {
		case err == nil: // the turn ended before the Close
			if seen != whole.String() || len(conv) != 2 || conv[1].StopReason != panto.StopEndTurn {
				t.Fatalf("a whole turn: saw %d bytes, conversation %s", len(seen), mustJSON(t, conv))
			}
		case kept != seen:
			t.Fatalf("closed (%v) after %d bytes; the conversation keeps %d: %s", err, len(seen), len(kept), mustJSON(t, conv))
		case len(conv) == 2 && conv[1].StopReason != panto.StopAborted && kept != whole.String():
			t.Fatalf("closed (%v) in the middle of the message, which ends %v", err, conv[1].StopReason)
		default:
			checkClosedTurn(t, err)
		}
		agent.Close()
	}
}
