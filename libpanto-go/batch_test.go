package panto_test

import (
	"fmt"
	"strings"
	"testing"

	"panto.dev/panto"
)

// A stream whose program stops after its first event (a consumer that waits, one of
// thousands) holds a small native batch, not the 64 events a fast stream reads a call;
// reading on, it gets every event in order however its batch grows.
func TestWaitingStreamHoldsASmallBatch(t *testing.T) {
	var text strings.Builder
	for i := range 300 {
		fmt.Fprintf(&text, "w%d ", i)
	}
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			loadScenario(t, scenario(textAnswer(text.String())))
			agent := newAgent(t, testConfig(p.name))
			stream := run(t, agent, "Hi")
			defer stream.Close()
			if !stream.Next() {
				t.Fatalf("no first event: %v", stream.Err())
			}
			if n := panto.BatchCapacity(stream); n > 4 {
				t.Fatalf("after its first event the stream holds a batch of %d events, want at most 4", n)
			}
			var got strings.Builder
			for ev := stream.Event(); ; ev = stream.Event() {
				if ev.Kind == panto.EventContentDelta {
					got.WriteString(ev.Text)
				}
				if n := panto.BatchCapacity(stream); n > 64 {
					t.Fatalf("a batch of %d events, want at most 64", n)
				}
				if !stream.Next() {
					break
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if got.String() != text.String() {
				t.Fatalf("text %q, want %q", got.String(), text.String())
			}
		})
	}
}
