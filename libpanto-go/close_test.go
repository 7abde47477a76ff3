package panto_test

import (
	"errors"
	"runtime"
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
		readToHello(t, run(t, agent, "Hi")) // then unreachable, never closed
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
