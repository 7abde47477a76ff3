package panto_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"panto.dev/panto"
)

// rendezvous lets n handlers wait until all have started: proof that they ran at once,
// with no timing. It gives up after 10 s (a handler that ran alone).
type rendezvous struct {
	mu      sync.Mutex
	started int
	all     chan struct{}
	n       int
}

func newRendezvous(n int) *rendezvous { return &rendezvous{n: n, all: make(chan struct{})} }

func (r *rendezvous) meet(ctx context.Context) error {
	r.mu.Lock()
	r.started++
	if r.started == r.n {
		close(r.all)
	}
	r.mu.Unlock()
	select {
	case <-r.all:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(10 * time.Second):
		return errors.New("ran alone")
	}
}

// threeCalls is a message asking for the tools a, b and c, then the answer.
func threeCalls(t *testing.T, names ...string) {
	loadScenario(t, scenario(
		toolUse("", "call_1", names[0], map[string]any{}, "call_2", names[1], map[string]any{},
			"call_3", names[2], map[string]any{}),
		textAnswer("All done")))
}

func TestToolsRunAtOnce(t *testing.T) {
	threeCalls(t, "a", "b", "c")
	meet := newRendezvous(3)
	tool := func(name string) panto.Tool {
		return panto.Tool{Name: name, Handler: func(ctx context.Context, _ json.RawMessage) (string, error) {
			return "ran " + name, meet.meet(ctx)
		}}
	}
	cfg := testConfig("anthropic")
	cfg.Tools = []panto.Tool{tool("a"), tool("b"), tool("c")}
	events := collect(t, run(t, newAgent(t, cfg), "Go"))
	if err := runErr(events); err != "" {
		t.Fatal(err)
	}
	results := ofKind(events, panto.EventToolResult)
	for i, r := range results {
		// The results come in call order, whatever order the handlers ended in.
		if want := []string{"ran a", "ran b", "ran c"}[i]; r.Text != want || r.IsError {
			t.Errorf("result %d = %q (error %v), want %q", i, r.Text, r.IsError, want)
		}
	}
	if len(results) != 3 {
		t.Fatalf("%d results: %s", len(results), kinds(events))
	}
}

// exclusive counts the handlers running and fails a sequential one that had company.
type exclusive struct {
	mu      sync.Mutex
	running int
	started int
}

func (x *exclusive) enter() (alone bool, started int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.running++
	x.started++
	return x.running == 1, x.started
}

func (x *exclusive) leave(aloneAtStart bool, started int) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	alone := aloneAtStart && x.running == 1 && x.started == started
	x.running--
	return alone
}

func TestSequentialToolRunsAlone(t *testing.T) {
	for _, mode := range []string{"tool", "agent"} {
		t.Run(mode, func(t *testing.T) {
			threeCalls(t, "a", "s", "c")
			var x exclusive
			var order sync.Mutex
			var ends []string
			tool := func(name string, sequential bool) panto.Tool {
				return panto.Tool{Name: name, Sequential: sequential,
					Handler: func(ctx context.Context, _ json.RawMessage) (string, error) {
						alone, n := x.enter()
						time.Sleep(20 * time.Millisecond) // room for an overlap to show
						ok := x.leave(alone, n)
						order.Lock()
						ends = append(ends, name)
						order.Unlock()
						if !ok && (sequential || mode == "agent") {
							return "", errors.New("overlapped")
						}
						return name, nil
					}}
			}
			cfg := testConfig("openai")
			cfg.Tools = []panto.Tool{tool("a", false), tool("s", mode == "tool"), tool("c", false)}
			if mode == "agent" {
				cfg.ToolExecution = panto.ToolsSequential
			}
			events := collect(t, run(t, newAgent(t, cfg), "Go"))
			if err := runErr(events); err != "" {
				t.Fatal(err)
			}
			for _, s := range ofKind(events, panto.EventToolCallStart) {
				if want := mode == "agent" || s.Name == "s"; s.Sequential != want {
					t.Errorf("%s: Sequential = %v, want %v", s.Name, s.Sequential, want)
				}
			}
			for _, r := range ofKind(events, panto.EventToolResult) {
				if r.IsError {
					t.Errorf("%s: %s", r.Name, r.Text)
				}
			}
			// a ended before s started, and c started after s ended.
			if len(ends) != 3 || ends[0] != "a" || ends[1] != "s" || ends[2] != "c" {
				t.Errorf("handlers ended in the order %v, want a s c", ends)
			}
		})
	}
}

func TestToolProgress(t *testing.T) {
	loadScenario(t, scenario(toolUse("", "call_1", "slow", map[string]any{}), textAnswer("Done")))
	cfg := testConfig("anthropic")
	cfg.Tools = []panto.Tool{{Name: "slow", Handler: func(ctx context.Context, _ json.RawMessage) (string, error) {
		panto.ReportProgress(ctx, "half way", 0.5)
		panto.ReportProgress(ctx, "almost", -1)
		return "finished", nil
	}}}
	panto.ReportProgress(context.Background(), "outside a tool: nothing", 1) // a no-op
	events := collect(t, run(t, newAgent(t, cfg), "Go"))
	if err := runErr(events); err != "" {
		t.Fatal(err)
	}
	got := ofKind(events, panto.EventToolCallStart, panto.EventToolProgress, panto.EventToolResult)
	if kinds(got) != "tool_call_start tool_progress tool_progress tool_result" {
		t.Fatalf("events: %s", kinds(got))
	}
	p1, p2 := got[1], got[2]
	if p1.ID != "call_1" || p1.Name != "slow" || p1.Text != "half way" || p1.Fraction != 0.5 {
		t.Errorf("first progress = %+v", p1)
	}
	if p2.Text != "almost" || p2.Fraction != -1 {
		t.Errorf("second progress = %+v, want text only (fraction -1)", p2)
	}
}

// handlersUntilCanceled are tools that block until their context is done, and say when
// they started and when they returned.
func handlersUntilCanceled(names ...string) (tools []panto.Tool, started, returned *sync.WaitGroup) {
	started, returned = &sync.WaitGroup{}, &sync.WaitGroup{}
	started.Add(len(names))
	returned.Add(len(names))
	for _, name := range names {
		tools = append(tools, panto.Tool{Name: name, Handler: func(ctx context.Context, _ json.RawMessage) (string, error) {
			defer returned.Done()
			started.Done()
			<-ctx.Done()
			return "", ctx.Err()
		}})
	}
	return tools, started, returned
}

func TestCancelWhileToolsRun(t *testing.T) {
	for _, how := range []string{"context", "Cancel", "Close"} {
		t.Run(how, func(t *testing.T) {
			threeCalls(t, "a", "b", "c")
			tools, started, returned := handlersUntilCanceled("a", "b", "c")
			cfg := testConfig("anthropic")
			cfg.Tools = tools
			agent := newAgent(t, cfg)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stream, err := agent.Run(ctx, "Go")
			if err != nil {
				t.Fatal(err)
			}
			go func() {
				started.Wait() // the three run at once: Next waits for them
				switch how {
				case "context":
					cancel()
				case "Cancel":
					stream.Cancel()
				case "Close":
					stream.Close()
				}
			}()
			for stream.Next() {
			}
			err = stream.Err()
			if !errors.Is(err, panto.ErrCanceled) {
				t.Fatalf("Err = %v, want ErrCanceled", err)
			}
			if how == "context" && !errors.Is(err, context.Canceled) {
				t.Errorf("Err = %v, want context.Canceled too", err)
			}
			returned.Wait() // every handler's context was canceled: none is left running
			stream.Close()
			if n := len(receivedRequests(t)); n != 1 {
				t.Errorf("%d requests, want 1: no result of a canceled turn is sent", n)
			}
			// The calls got "canceled" results in the conversation, and the agent goes on.
			loadScenario(t, scenario(textAnswer("Again")))
			if err := runErr(collect(t, run(t, agent, "Again"))); err != "" {
				t.Fatal(err)
			}
		})
	}
}

func TestSubmitAnswersACallBeforeItsHandlerRuns(t *testing.T) {
	threeCalls(t, "a", "b", "c")
	var mu sync.Mutex
	var ran []string
	tool := func(name string) panto.Tool {
		return panto.Tool{Name: name, Handler: func(context.Context, json.RawMessage) (string, error) {
			mu.Lock()
			ran = append(ran, name)
			mu.Unlock()
			return "handler " + name, nil
		}}
	}
	cfg := testConfig("anthropic")
	cfg.Tools = []panto.Tool{tool("a"), tool("b"), tool("c")}
	stream := run(t, newAgent(t, cfg), "Go")
	var results []string
	for ev := range stream.Iter {
		if ev.Kind == panto.EventToolCallStart && ev.Name == "b" {
			if err := stream.SubmitToolResult(ev.ID, "given", false); err != nil {
				t.Fatal(err)
			}
		}
		if ev.Kind == panto.EventToolResult {
			results = append(results, ev.Text)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ran) != 2 || len(results) != 3 || results[1] != "given" || results[0] != "handler a" {
		t.Fatalf("handlers %v ran, results %q", ran, results)
	}
}

func TestReopenedTurnRunsItsTools(t *testing.T) {
	loadScenario(t, scenario(providerError(400, "invalid_request_error", "bad model"),
		toolUse("", "call_1", "a", map[string]any{}, "call_2", "b", map[string]any{}), textAnswer("Done")))
	meet := newRendezvous(2)
	tool := func(name string) panto.Tool {
		return panto.Tool{Name: name, Handler: func(ctx context.Context, _ json.RawMessage) (string, error) {
			return "ran " + name, meet.meet(ctx)
		}}
	}
	cfg := testConfig("anthropic")
	cfg.Tools = []panto.Tool{tool("a"), tool("b")}
	agent := newAgent(t, cfg)
	stream := run(t, agent, "Go")
	nextAll(stream)
	asPantoError(t, stream.Err(), panto.ErrInvalidRequest)
	if err := stream.Reopen(context.Background()); err != nil {
		t.Fatal(err)
	}
	events := nextAll(stream)
	if err := stream.Err(); err != nil {
		t.Fatalf("%v after %s", err, kinds(events))
	}
	results := ofKind(events, panto.EventToolResult)
	if len(results) != 2 || results[0].Text != "ran a" || results[1].Text != "ran b" {
		t.Fatalf("results %+v", results)
	}
}

func TestEventsRunsToolsAtOnce(t *testing.T) {
	threeCalls(t, "a", "b", "c")
	meet := newRendezvous(3)
	tool := func(name string) panto.Tool {
		return panto.Tool{Name: name, Handler: func(ctx context.Context, _ json.RawMessage) (string, error) {
			return name, meet.meet(ctx)
		}}
	}
	cfg := testConfig("openai")
	cfg.Tools = []panto.Tool{tool("a"), tool("b"), tool("c")}
	stream := run(t, newAgent(t, cfg), "Go")
	var results []string
	for ev := range stream.Events(context.Background()) {
		if ev.Kind == panto.EventToolResult {
			results = append(results, ev.Text)
		}
	}
	if err := stream.Err(); err != nil || len(results) != 3 || results[0] != "a" || results[2] != "c" {
		t.Fatalf("results %q, Err %v", results, err)
	}
}
