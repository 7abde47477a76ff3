package panto_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"testing"
	"time"

	"panto.dev/panto"
)

// Tests of Stream.Events, the channel form of a turn (issue 5).

// goroutines counts the goroutines once the idle ones of the emulator's control calls are
// gone.
func goroutines() int {
	http.DefaultClient.CloseIdleConnections()
	runtime.GC()
	return runtime.NumGoroutine()
}

// waitGoroutines waits up to 2s for the goroutine count to fall back to before.
func waitGoroutines(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		after := goroutines()
		if after <= before {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines before, %d after:\n%s", before, after, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// recvClosed checks that ch is closed, or closes within 1s, without another event.
func recvClosed(t *testing.T, ch <-chan panto.Event) {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if ok {
			t.Fatalf("an event after the consumer stopped: %+v", ev)
		}
	case <-time.After(time.Second):
		t.Fatal("the channel was not closed within 1s")
	}
}

func TestEventsFullTurn(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			loadScenario(t, scenario(textAnswer("Hello world")))
			agent := newAgent(t, testConfig(p.name))
			before := goroutines()
			stream := run(t, agent, "Hi")
			var events []panto.Event
			for ev := range stream.Events(context.Background()) {
				events = append(events, ev)
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			checkTextTurn(t, events, "Hello world", p.stop)
			waitGoroutines(t, before)
			// The goroutine closed the stream: the agent takes a new turn.
			loadScenario(t, scenario(textAnswer("Again")))
			if events := nextAll(run(t, agent, "Go on")); len(events) == 0 {
				t.Fatal("no events in the next turn")
			}
		})
	}
}

func TestEventsRunsHandlers(t *testing.T) {
	loadScenario(t, scenario(
		toolUse("", "call_1", "get_weather", map[string]any{"city": "Paris"}),
		textAnswer("Sunny in Paris")))
	weather := panto.MustNewTool("", "Current weather for a city.",
		func(ctx context.Context, in GetWeather) (string, error) { return "Sunny in " + in.City, nil })
	cfg := testConfig("anthropic")
	cfg.Tools = []panto.Tool{weather}
	agent := newAgent(t, cfg)
	stream := run(t, agent, "Weather in Paris?")
	var events []panto.Event
	for ev := range stream.Events(context.Background()) {
		events = append(events, ev)
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	res := ofKind(events, panto.EventToolResult)
	if len(res) != 1 || res[0].Text != "Sunny in Paris" || res[0].IsError {
		t.Fatalf("tool results %+v in %s", res, kinds(events))
	}
	if last := events[len(events)-1]; last.Kind != panto.EventMessageComplete || last.StopReason != panto.StopEndTurn {
		t.Fatalf("last event %+v", last)
	}
}

// With WithManualTools the goroutine waits for SubmitToolResult, given while reading.
func TestEventsManualTools(t *testing.T) {
	loadScenario(t, scenario(
		toolUse("", "call_1", "get_weather", map[string]any{"city": "Paris"}),
		textAnswer("Sunny in Paris")))
	weather := panto.MustNewTool("", "Current weather for a city.",
		func(ctx context.Context, in GetWeather) (string, error) { return "handler ran", nil })
	cfg := testConfig("anthropic")
	cfg.Tools = []panto.Tool{weather}
	agent := newAgent(t, cfg)
	stream, err := agent.Run(context.Background(), "Weather in Paris?", panto.WithManualTools())
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	var events []panto.Event
	for ev := range stream.Events(context.Background()) {
		if ev.Kind == panto.EventToolCallStart && ev.AwaitingResult {
			time.Sleep(50 * time.Millisecond) // the goroutine finds the result due, and waits
			var in GetWeather
			if err := json.Unmarshal(ev.Input(), &in); err != nil {
				t.Fatal(err)
			}
			if err := stream.SubmitToolResult(ev.ID, "Sunny in "+in.City, false); err != nil {
				t.Fatal(err)
			}
		}
		events = append(events, ev)
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if res := ofKind(events, panto.EventToolResult); len(res) != 1 || res[0].Text != "Sunny in Paris" {
		t.Fatalf("tool results %+v in %s", res, kinds(events))
	}
}

// The consumer cancels its context and stops reading, while the goroutine waits to send
// (a turn that arrived whole) or waits in the library (a stalled turn).
func TestEventsConsumerCancels(t *testing.T) {
	cases := []struct {
		name   string
		answer map[string]any
	}{
		{"sending", textAnswer("Hello world")},
		{"stalled", stalledAnswer("anthropic")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			loadScenario(t, scenario(c.answer, textAnswer("Again")))
			agent := newAgent(t, stallConfig("anthropic"))
			before := goroutines()
			stream := run(t, agent, "Hi")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ch := stream.Events(ctx)
			for ev := range ch {
				if ev.Kind == panto.EventContentDelta {
					if ev.Text != "Hello " {
						t.Fatalf("first delta %q", ev.Text)
					}
					break
				}
			}
			if c.name == "stalled" {
				time.Sleep(100 * time.Millisecond) // the goroutine waits in the library
			}
			start := time.Now()
			cancel()
			waitGoroutines(t, before)
			if d := time.Since(start); d > time.Second {
				t.Fatalf("the goroutine exited %v after the cancel", d)
			}
			err := stream.Err()
			if !errors.Is(err, context.Canceled) || !errors.Is(err, panto.ErrCanceled) {
				t.Fatalf("Err = %v, want context.Canceled and ErrCanceled", err)
			}
			recvClosed(t, ch)
			if c.name == "stalled" {
				checkAborted(t, agent)
			}
			checkNextTurnCarries(t, agent, 1)
		})
	}
}

// A deadline on the consumer's context gives ErrTimeout.
func TestEventsConsumerDeadline(t *testing.T) {
	loadScenario(t, scenario(stalledAnswer("openai")))
	agent := newAgent(t, stallConfig("openai"))
	stream := run(t, agent, "Hi")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var text string
	for ev := range stream.Events(ctx) {
		if ev.Kind == panto.EventContentDelta {
			text += ev.Text
		}
	}
	err := stream.Err()
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || text != "Hello " {
		t.Fatalf("Err = %v, text %q; want context.DeadlineExceeded after %q", err, text, "Hello ")
	}
	asPantoError(t, err, panto.ErrTimeout)
}

// The consumer closes the stream while the goroutine waits in the library on a stall.
func TestEventsCloseWhileStalled(t *testing.T) {
	loadScenario(t, scenario(stalledAnswer("anthropic"), textAnswer("Again")))
	agent := newAgent(t, stallConfig("anthropic"))
	before := goroutines()
	stream := run(t, agent, "Hi")
	ch := stream.Events(context.Background())
	for ev := range ch {
		if ev.Kind == panto.EventContentDelta {
			break
		}
	}
	time.Sleep(100 * time.Millisecond) // the goroutine waits in the library, on the stall
	start := time.Now()
	stream.Close()
	if d := time.Since(start); d > 50*time.Millisecond {
		t.Errorf("Close waited %v", d)
	}
	recvClosed(t, ch)
	if d := time.Since(start); d > time.Second {
		t.Fatalf("the channel closed %v after Close", d)
	}
	waitGoroutines(t, before)
	if err := stream.Err(); !errors.Is(err, panto.ErrClosed) {
		t.Fatalf("Err = %v, want ErrClosed", err)
	}
	checkAborted(t, agent)
	checkNextTurnCarries(t, agent, 1)
}

// The consumer closes the stream while the goroutine waits to send the next event.
func TestEventsCloseWhileSending(t *testing.T) {
	loadScenario(t, scenario(textAnswer("Hello world"), textAnswer("Again")))
	agent := newAgent(t, testConfig("anthropic"))
	before := goroutines()
	stream := run(t, agent, "Hi")
	ch := stream.Events(context.Background())
	if ev := <-ch; ev.Kind != panto.EventMessageStart {
		t.Fatalf("first event %+v", ev)
	}
	stream.Close()
	waitGoroutines(t, before)
	if err := stream.Err(); !errors.Is(err, panto.ErrClosed) {
		t.Fatalf("Err = %v, want ErrClosed", err)
	}
	recvClosed(t, ch)
	if events := nextAll(run(t, agent, "Go on")); len(events) == 0 {
		t.Fatal("no events in the next turn")
	}
}

// Reads a turn from a channel, with a handler answering the model's tool call on the way.
func ExampleStream_Events() {
	if err := postScenario(scenario(
		toolUse("", "call_1", "get_weather", map[string]any{"city": "Paris"}),
		textAnswer("Sunny in Paris"))); err != nil {
		fmt.Println(err)
		return
	}
	type Weather struct {
		City string `json:"city" description:"The city"`
	}
	weather := panto.MustNewTool("get_weather", "Current weather for a city.",
		func(ctx context.Context, in Weather) (string, error) { return "Sunny, 21 °C in " + in.City, nil })
	agent, err := panto.NewAgent(panto.Config{Provider: "anthropic", Model: "claude-sonnet-4-5",
		BaseURL: emulatorURL, APIKey: "test-key", Tools: []panto.Tool{weather}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer agent.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel() // also stops the goroutine of Events if the loop stops early
	stream, err := agent.Run(ctx, "Weather in Paris?")
	if err != nil {
		fmt.Println(err)
		return
	}
	for ev := range stream.Events(ctx) {
		switch ev.Kind {
		case panto.EventToolCallStart:
			fmt.Printf("call %s %s\n", ev.Name, ev.Input())
		case panto.EventToolResult:
			fmt.Println("result:", ev.Text)
		case panto.EventBlockComplete:
			if ev.BlockKind == panto.BlockText {
				fmt.Println("text:", ev.Text)
			}
		case panto.EventMessageComplete:
			fmt.Println("done:", ev.StopReason)
		}
	}
	if err := stream.Err(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// call get_weather {"city":"Paris"}
	// result: Sunny, 21 °C in Paris
	// text: Sunny in Paris
	// done: end_turn
}
