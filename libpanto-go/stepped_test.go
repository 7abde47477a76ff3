package panto_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"panto.dev/panto"
)

// Tests of the stepped read (docs/go.md, "How a stream waits"): a stream waits for the
// provider parked in Go's netpoller, between non-blocking steps (panto_step_events), not in
// a cgo call that holds an OS thread.

func needsStep(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" || !slices.Contains([]string{"amd64", "arm64"}, runtime.GOARCH) {
		t.Skip("panto steps streams on Linux on x86_64 and aarch64 only")
	}
}

// A bound for waits that only a bug makes long.
const bound = 30 * time.Second

// waitForPark returns once the stream has begun a wait after the first `after` ones.
func waitForPark(t *testing.T, stream *panto.Stream, after uint64) {
	t.Helper()
	for end := time.Now().Add(bound); panto.StreamWaits(stream) <= after; time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the stream did not wait within %v", bound)
		}
	}
}

// 200 turns whose answers come 300 ms after their request all wait at once; a blocking
// read holds an OS thread each (about 200 created), the stepped ones hold none while they
// wait (5 created here).
func TestManyTurnsWaitOnFewThreads(t *testing.T) {
	needsStep(t)
	const n = 200
	responses := make([]map[string]any, n)
	want := make([]string, n)
	for i := range responses {
		want[i] = fmt.Sprintf("answer %d", i)
		responses[i] = textAnswer(want[i])
		responses[i]["delay_ms"] = 300
	}
	loadScenario(t, scenario(responses...))
	agents := make([]*panto.Agent, n)
	for i := range agents {
		agents[i] = newAgent(t, testConfig("anthropic"))
	}

	threads := pprof.Lookup("threadcreate")
	before := threads.Count()
	texts, errs := make([]string, n), make([]error, n)
	var wg sync.WaitGroup
	for i, agent := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stream, err := agent.Run(context.Background(), "Hi")
			if err != nil {
				errs[i] = err
				return
			}
			var text strings.Builder
			for ev := range stream.Iter {
				if ev.Kind == panto.EventContentDelta {
					text.WriteString(ev.Text)
				}
			}
			texts[i], errs[i] = text.String(), stream.Err()
		}()
	}
	wg.Wait()
	created := threads.Count() - before
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	slices.Sort(texts)
	slices.Sort(want)
	if !slices.Equal(texts, want) {
		t.Fatalf("texts = %q", texts)
	}
	t.Logf("%d turns: %d OS threads created", n, created)
	// A few are Go's own (a cgo step that runs long hands its P to a new M), more on a loaded
	// machine; half the turns is far from either.
	if created > n/2 {
		t.Fatalf("%d OS threads created for %d turns that wait at once, want at most %d", created, n, n/2)
	}
}

// A cancel while the stream is parked (Cancel, the Run context, Close) ends the Next at
// once and keeps the partial message, aborted; the agent runs its next turn.
func TestSteppedCancelWhileParked(t *testing.T) {
	needsStep(t)
	for _, how := range []string{"Cancel", "context", "Close"} {
		t.Run(how, func(t *testing.T) {
			loadScenario(t, scenario(stalledAnswer("anthropic"), textAnswer("Again")))
			agent := newAgent(t, stallConfig("anthropic"))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stream := startStalled(t, ctx, agent)
			if !panto.StreamStepped(stream) {
				t.Fatal("the stream is not stepped")
			}
			waits := panto.StreamWaits(stream)
			done := make(chan bool)
			go func() { done <- stream.Next() }()
			waitForPark(t, stream, waits) // the stall: the Next waits in the netpoller
			switch how {
			case "Cancel":
				stream.Cancel()
			case "context":
				cancel()
			case "Close":
				stream.Close()
			}
			select {
			case got := <-done:
				if got {
					t.Fatalf("Next = true with %+v", stream.Event())
				}
			case <-time.After(bound):
				t.Fatalf("the parked Next did not return after %s", how)
			}
			err := stream.Err()
			asPantoError(t, err, panto.ErrCanceled)
			if how == "context" && !errors.Is(err, context.Canceled) {
				t.Fatalf("Err = %v, want it to match context.Canceled", err)
			}
			if how == "Close" {
				checkClosedTurn(t, err)
			}
			checkAborted(t, agent)
			checkNextTurnCarries(t, agent, 1)
		})
	}
}

// While a stepped read waits between two steps no native call runs, so the agent answers
// other goroutines at once: its conversation (the turn's user message so far), settings and
// connections. (With the agent's call lock held across the wait, these would wait for the
// provider: here for the stall's end at the emulator's hold limit, after which the
// conversation would hold the turn's end, not its user message alone.)
func TestTheAgentAnswersWhileAStreamWaits(t *testing.T) {
	needsStep(t)
	loadScenario(t, scenario(stalledAnswer("anthropic"), textAnswer("Again")))
	agent := newAgent(t, testConfig("anthropic")) // the stall ends at the emulator's hold limit
	stream := startStalled(t, context.Background(), agent)
	waits := panto.StreamWaits(stream)
	done := make(chan bool)
	go func() { done <- stream.Next() }()
	waitForPark(t, stream, waits)
	answered := make(chan []panto.Message, 1)
	go func() {
		msgs, err := agent.Conversation()
		if err != nil {
			t.Error(err)
		}
		if _, err := agent.Settings(); err != nil {
			t.Error(err)
		}
		if _, err := agent.Connections(); err != nil {
			t.Error(err)
		}
		answered <- msgs
	}()
	var msgs []panto.Message
	select {
	case msgs = <-answered:
	case <-time.After(bound):
		t.Fatal("Conversation did not return while the stream waited")
	}
	if len(msgs) != 1 || msgs[0].Role != "user" {
		t.Fatalf("Conversation() while the turn waits = %+v, want the user message alone", msgs)
	}
	stream.Cancel()
	if <-done {
		t.Fatalf("Next = true with %+v", stream.Event())
	}
	asPantoError(t, stream.Err(), panto.ErrCanceled)
	checkAborted(t, agent)
}

// A server that never answers: the turn's first_byte deadline is a wait's deadline (no
// watchdog thread), and ends the turn with ErrTimeout.
func TestSteppedSilentServerTimesOut(t *testing.T) {
	needsStep(t)
	silent := textAnswer("late")
	silent["delay_ms"] = 60_000
	loadScenario(t, scenario(silent))
	cfg := testConfig("anthropic")
	cfg.Retry = &panto.RetryPolicy{MaxRetries: panto.NoRetries}
	cfg.Timeouts = &panto.Timeouts{FirstByte: 200 * time.Millisecond}
	agent := newAgent(t, cfg)
	stream := run(t, agent, "Hi")
	if events := nextAll(stream); len(events) != 0 {
		t.Fatalf("events %s from a silent server", kinds(events))
	}
	perr := asPantoError(t, stream.Err(), panto.ErrTimeout)
	if !strings.Contains(perr.Message, "first_byte_ms") {
		t.Fatalf("error = %+v", perr)
	}
	if !panto.StreamStepped(stream) || panto.StreamWaits(stream) == 0 {
		t.Fatalf("stepped %v, %d waits: the turn did not wait in the netpoller",
			panto.StreamStepped(stream), panto.StreamWaits(stream))
	}
}

// A tool round: the stepped stream gets PANTO_ERR_RESULT_PENDING as the blocking one does,
// runs the handler on a goroutine, and goes on with the next request.
func TestSteppedToolRound(t *testing.T) {
	needsStep(t)
	loadScenario(t, scenario(
		toolUse("", "call_1", "double", map[string]any{"n": 21}, "call_2", "ask", map[string]any{}),
		textAnswer("Done.")))
	cfg := testConfig("anthropic")
	cfg.Tools = []panto.Tool{
		{Name: "double", Description: "Doubles n.", Handler: func(_ context.Context, in json.RawMessage) (string, error) {
			var args struct{ N int }
			err := json.Unmarshal(in, &args)
			return fmt.Sprint(2 * args.N), err
		}},
		{Name: "ask", Description: "Asks the user: the program answers."},
	}
	agent := newAgent(t, cfg)
	stream := run(t, agent, "Go")
	var results []string
	var text strings.Builder
	for {
		for stream.Next() {
			switch ev := stream.Event(); ev.Kind {
			case panto.EventToolResult:
				results = append(results, ev.ID+"="+ev.Text)
			case panto.EventContentDelta:
				text.WriteString(ev.Text)
			}
		}
		if !errors.Is(stream.Err(), panto.ErrResultPending) {
			break
		}
		if err := stream.SubmitToolResult("call_2", "yes", false); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(results, []string{"call_1=42", "call_2=yes"}) || !strings.HasSuffix(text.String(), "Done.") {
		t.Fatalf("results %q, text %q", results, text.String())
	}
	if !panto.StreamStepped(stream) {
		t.Fatal("the stream is not stepped")
	}
}

// The steps run the library on a stack of the stream's own: Go's signal handlers (on each
// thread's signal stack) and the garbage collector must not mind. Turns step while the CPU
// profiler sends SIGPROF, a goroutine sends SIGURG to the process (preemption's signal)
// and another collects garbage without a pause.
func TestSteppingUnderSignalsAndGC(t *testing.T) {
	needsStep(t)
	words := make([]string, 4000)
	for i := range words {
		words[i] = fmt.Sprintf("w%d", i)
	}
	body := strings.Join(words, " ")
	answer := textAnswer(body)
	answer["chunk_size"] = 64
	loadScenario(t, map[string]any{"responses": []any{answer}, "repeat_last": true})

	runtime.SetCPUProfileRate(1000) // before StartCPUProfile, which then keeps this rate
	if err := pprof.StartCPUProfile(io.Discard); err != nil {
		t.Skipf("no CPU profile: %v", err)
	}
	defer pprof.StopCPUProfile()
	stop := make(chan struct{})
	var noise sync.WaitGroup
	var signals atomic.Int64
	noise.Add(1)
	go func() {
		defer noise.Done()
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	}()
	noise.Add(1)
	go func() {
		defer noise.Done()
		for {
			select {
			case <-stop:
				return
			default:
				_ = syscall.Kill(os.Getpid(), syscall.SIGURG)
				signals.Add(1)
				runtime.Gosched()
			}
		}
	}()

	const streams, turns = 4, 5
	var wg sync.WaitGroup
	errs := make([]error, streams)
	for i := range streams {
		agent := newAgent(t, testConfig("anthropic"))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range turns {
				stream, err := agent.Run(context.Background(), "Hi")
				if err != nil {
					errs[i] = err
					return
				}
				var text strings.Builder
				for ev := range stream.Iter {
					if ev.Kind == panto.EventContentDelta {
						text.WriteString(ev.Text)
					}
				}
				if err := stream.Err(); err != nil || text.String() != body {
					errs[i] = fmt.Errorf("turn: %v, %d bytes of text, want %d", err, text.Len(), len(body))
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	noise.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d turns under %d SIGURGs, SIGPROF and GC", streams*turns, signals.Load())
}

// Where the library refuses to step, a stream reads by the blocking call: the same turn,
// and a cancel still ends a Next that waits (here, forced on a platform that steps).
func TestBlockingReadWhereSteppingIsRefused(t *testing.T) {
	loadScenario(t, scenario(textAnswer("Hello world"), stalledAnswer("anthropic"), textAnswer("Again")))
	agent := newAgent(t, stallConfig("anthropic"))
	stream := run(t, agent, "Hi")
	panto.ReadByBlocking(stream)
	checkTextTurn(t, nextAll(stream), "Hello world", "end_turn")
	if err := stream.Err(); err != nil || panto.StreamStepped(stream) || panto.StreamWaits(stream) != 0 {
		t.Fatalf("Err %v, stepped %v, %d waits", err, panto.StreamStepped(stream), panto.StreamWaits(stream))
	}

	stream, err := agent.Run(context.Background(), "More")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	panto.ReadByBlocking(stream)
	for stream.Next() && stream.Event().Kind != panto.EventContentDelta {
	}
	done := make(chan bool)
	go func() { done <- stream.Next() }() // waits on the stall, in the library
	stream.Cancel()
	select {
	case got := <-done:
		if got {
			t.Fatalf("Next = true with %+v", stream.Event())
		}
	case <-time.After(bound):
		t.Fatal("the blocked Next did not return after Cancel")
	}
	asPantoError(t, stream.Err(), panto.ErrCanceled)
	if panto.StreamStepped(stream) {
		t.Fatal("the stream stepped")
	}
}
