package panto_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"panto.dev/panto"
)

// Tests of issue 4: retries, timeouts, cancellation, Close and Reopen, SetConfig and
// thinking levels, against the emulator's scripted errors, faults and stalls.

// stallConfig is the configuration of the tests that block on a stalled answer: an idle
// timeout of 2s ends the stall should the cancellation under test not work, so that the
// test fails (with ErrTimeout, or too late) rather than hangs.
func stallConfig(provider string) panto.Config {
	cfg := testConfig(provider)
	cfg.Timeouts = &panto.Timeouts{Idle: 2 * time.Second}
	return cfg
}

// fastRetry retries with delays of a few milliseconds, so the tests stay fast.
func fastRetry(max int) *panto.RetryPolicy {
	return &panto.RetryPolicy{MaxRetries: max, InitialDelay: 10 * time.Millisecond, MaxDelay: 40 * time.Millisecond}
}

func providerError(status int, typ, msg string) map[string]any {
	return map[string]any{"status": status, "error": map[string]any{"type": typ, "message": msg}}
}

// nextAll reads the turn with Next (the stream stays open, for Reopen and Err).
func nextAll(stream *panto.Stream) []panto.Event {
	var events []panto.Event
	for stream.Next() {
		events = append(events, stream.Event())
	}
	return events
}

func asPantoError(t *testing.T, err error, code panto.Code) *panto.Error {
	t.Helper()
	var perr *panto.Error
	if !errors.As(err, &perr) || !errors.Is(err, code) || perr.Code != code {
		t.Fatalf("err = %v (%T), want a *panto.Error with code %v", err, err, code)
	}
	return perr
}

func conversation(t *testing.T, agent *panto.Agent) []panto.Message {
	t.Helper()
	conv, err := agent.Conversation()
	if err != nil {
		t.Fatal(err)
	}
	return conv
}

// requestMessages is the "messages" array of the i-th request, as JSON text per message.
func requestMessages(t *testing.T, i int) []string {
	t.Helper()
	msgs, _ := requestBody(t, i)["messages"].([]any)
	var out []string
	for _, m := range msgs {
		b, _ := json.Marshal(m)
		out = append(out, string(b))
	}
	return out
}

// sse renders (event name, data) pairs as an SSE body; an empty name gives a data-only
// event (OpenAI).
func sse(events ...string) string {
	var b strings.Builder
	for i := 0; i < len(events); i += 2 {
		if events[i] != "" {
			b.WriteString("event: " + events[i] + "\n")
		}
		b.WriteString("data: " + events[i+1] + "\n\n")
	}
	return b.String()
}

// stalledAnswer is a raw streamed answer that delivers a message start, a text block start
// and the delta "Hello ", then stalls: the emulator sends nothing more and holds the
// connection open (the rest of the body, "world" and the end, is never sent).
func stalledAnswer(provider string) map[string]any {
	var prefix, rest string
	switch provider {
	case "anthropic":
		prefix = sse(
			"message_start", `{"type":"message_start","message":{"id":"msg_stall","type":"message","role":"assistant","model":"test-model","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1}}}`,
			"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello "}}`)
		rest = sse(
			"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"world"}}`,
			"content_block_stop", `{"type":"content_block_stop","index":0}`,
			"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}`,
			"message_stop", `{"type":"message_stop"}`)
	case "openai":
		chunk := func(delta, finish string) string {
			return `{"id":"chatcmpl-stall","object":"chat.completion.chunk","created":1,"model":"test-model","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]}`
		}
		prefix = sse(
			"", chunk(`{"role":"assistant","content":""}`, "null"),
			"", chunk(`{"content":"Hello "}`, "null"))
		rest = sse(
			"", chunk(`{"content":"world"}`, "null"),
			"", chunk(`{}`, `"stop"`),
			"", "[DONE]")
	}
	return map[string]any{"body": prefix + rest, "fault": map[string]any{"after_bytes": len(prefix), "kind": "stall"}}
}

// startStalled runs a turn on a stalled answer and reads up to the delta "Hello ", so
// that the next Next blocks in the library.
func startStalled(t *testing.T, ctx context.Context, agent *panto.Agent) *panto.Stream {
	t.Helper()
	stream, err := agent.Run(ctx, "Hi")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stream.Close() })
	for stream.Next() {
		if ev := stream.Event(); ev.Kind == panto.EventContentDelta {
			if ev.Text != "Hello " {
				t.Fatalf("delta %q, want %q", ev.Text, "Hello ")
			}
			return stream
		}
	}
	t.Fatalf("the stalled answer ended before its delta: %v", stream.Err())
	return nil
}

// checkAborted checks that the conversation holds the user message and the partial
// assistant message of a canceled turn.
func checkAborted(t *testing.T, agent *panto.Agent) {
	t.Helper()
	want := []panto.Message{
		{Role: "user", Content: []panto.ContentBlock{{Type: "text", Text: "Hi"}}},
		{Role: "assistant", Content: []panto.ContentBlock{{Type: "text", Text: "Hello "}}, StopReason: panto.StopAborted},
	}
	conv := conversation(t, agent)
	// The aborted message is recorded like any other: who wrote it, and the usage reported
	// before the cancellation (how much depends on where it landed).
	if len(conv) == 2 {
		if a := &conv[1]; a.Provider == "" || a.Model != "test-model" || a.Usage == nil {
			t.Fatalf("the aborted message lacks its provider, model or usage: %+v", *a)
		} else {
			a.Provider, a.Model, a.Usage = "", "", nil
		}
	}
	if got := mustJSON(t, conv); got != mustJSON(t, want) {
		t.Fatalf("conversation = %s\nwant %s", got, mustJSON(t, want))
	}
	raw, err := agent.ConversationJSON()
	if err != nil || !strings.Contains(string(raw), `"stop_reason":"aborted"`) {
		t.Fatalf("conversation JSON %s (%v) lacks the stop reason aborted", raw, err)
	}
}

// checkNextTurnCarries runs one more turn (the scenario's next answer) and checks that its
// request carried the aborted partial message.
func checkNextTurnCarries(t *testing.T, agent *panto.Agent, request int) {
	t.Helper()
	stream := run(t, agent, "Go on")
	if events := nextAll(stream); stream.Err() != nil || len(events) == 0 ||
		events[len(events)-1].Kind != panto.EventMessageComplete {
		t.Fatalf("the turn after the cancellation: %v, %s", stream.Err(), kinds(events))
	}
	msgs := requestMessages(t, request)
	if len(msgs) != 3 || !strings.Contains(msgs[1], `"assistant"`) || !strings.Contains(msgs[1], "Hello ") ||
		!strings.Contains(msgs[2], "Go on") {
		t.Fatalf("the next request's messages = %v, want Hi, the partial answer, Go on", msgs)
	}
}

func TestRetryThenSuccess(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			loadScenario(t, scenario(providerError(529, "overloaded_error", "Overloaded"), textAnswer("Hello world")))
			cfg := testConfig(p.name)
			cfg.Retry = fastRetry(2)
			stream := run(t, newAgent(t, cfg), "Hi")
			events := nextAll(stream)
			if err := stream.Err(); err != nil {
				t.Fatalf("Err = %v, want nil after the retry", err)
			}
			if len(events) == 0 {
				t.Fatal("no events")
			}
			retry := events[0]
			if retry.Kind != panto.EventProviderRetry || retry.Attempt != 1 || retry.HTTPStatus != 529 ||
				retry.Text != "overloaded_error: Overloaded" {
				t.Fatalf("first event = %+v, want provider_retry attempt 1 after HTTP 529", retry)
			}
			// initial 10ms, with jitter in [0.75, 1].
			if retry.Delay < 7*time.Millisecond || retry.Delay > 10*time.Millisecond {
				t.Errorf("Delay = %v, want 7.5-10ms", retry.Delay)
			}
			if retry.Kind.String() != "provider_retry" {
				t.Errorf("name %q", retry.Kind.String())
			}
			checkTextTurn(t, events[1:], "Hello world", p.stop)
			reqs := receivedRequests(t)
			if len(reqs) != 2 || string(reqs[0].Body) != string(reqs[1].Body) {
				t.Fatalf("%d requests, want 2 identical ones", len(reqs))
			}
		})
	}
}

func TestRetryAfterHonored(t *testing.T) {
	limited := providerError(429, "rate_limit_error", "Slow down")
	limited["headers"] = map[string]any{"retry-after-ms": "150"}
	loadScenario(t, scenario(limited, textAnswer("Hello world")))
	// The default policy would wait 375-500ms: the provider's 150ms wins.
	stream := run(t, newAgent(t, testConfig("anthropic")), "Hi")
	if !stream.Next() {
		t.Fatal(stream.Err())
	}
	retry := stream.Event()
	if retry.Kind != panto.EventProviderRetry || retry.Delay != 150*time.Millisecond || retry.HTTPStatus != 429 ||
		retry.Attempt != 1 || !strings.HasPrefix(retry.Text, "rate_limit_error") {
		t.Fatalf("event = %+v, want a retry after exactly 150ms", retry)
	}
	start := time.Now()
	if !stream.Next() || stream.Event().Kind != panto.EventMessageStart {
		t.Fatalf("after the retry: %+v, %v", stream.Event(), stream.Err())
	}
	if waited := time.Since(start); waited < 150*time.Millisecond || waited > 350*time.Millisecond {
		t.Errorf("the retry waited %v, want 150ms (and not the default backoff)", waited)
	}
	if nextAll(stream); stream.Err() != nil {
		t.Fatal(stream.Err())
	}

	// A provider that asks for longer than MaxRetryAfter gets its error returned at once.
	limited["headers"] = map[string]any{"retry-after-ms": "5000"}
	loadScenario(t, scenario(limited, textAnswer("never")))
	cfg := testConfig("anthropic")
	cfg.Retry = &panto.RetryPolicy{MaxRetryAfter: time.Second}
	start = time.Now()
	stream = run(t, newAgent(t, cfg), "Hi")
	if events := nextAll(stream); len(events) != 0 {
		t.Fatalf("events %s, want none", kinds(events))
	}
	perr := asPantoError(t, stream.Err(), panto.ErrRateLimit)
	if perr.HTTPStatus != 429 || perr.Type != "rate_limit_error" || time.Since(start) > time.Second {
		t.Fatalf("error = %+v after %v", perr, time.Since(start))
	}
	if n := len(receivedRequests(t)); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
}

func TestRetriesExhausted(t *testing.T) {
	failing := providerError(500, "api_error", "Internal")
	loadScenario(t, scenario(failing, failing, failing, textAnswer("never")))
	cfg := testConfig("anthropic")
	cfg.Retry = fastRetry(2)
	agent := newAgent(t, cfg)
	stream := run(t, agent, "Hi")
	events := nextAll(stream)
	if kinds(events) != "provider_retry provider_retry" {
		t.Fatalf("events %s, want two retries", kinds(events))
	}
	for i, ev := range events {
		if ev.Attempt != i+1 || ev.HTTPStatus != 500 || ev.Text != "api_error: Internal" {
			t.Errorf("retry %d = %+v", i, ev)
		}
	}
	if events[1].Delay <= events[0].Delay { // 7.5-10ms, then 15-20ms
		t.Errorf("delays %v then %v, want a growing backoff", events[0].Delay, events[1].Delay)
	}
	perr := asPantoError(t, stream.Err(), panto.ErrServer)
	if perr.HTTPStatus != 500 || perr.Type != "api_error" || perr.Message != "Internal" {
		t.Fatalf("error = %+v", perr)
	}
	if n := len(receivedRequests(t)); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}
	if conv := conversation(t, agent); len(conv) != 0 {
		t.Fatalf("conversation = %+v, want none: the failed turn is rolled back", conv)
	}

	t.Run("NoRetries", func(t *testing.T) {
		loadScenario(t, scenario(failing, textAnswer("never")))
		cfg := testConfig("openai")
		cfg.Retry = &panto.RetryPolicy{MaxRetries: panto.NoRetries}
		stream := run(t, newAgent(t, cfg), "Hi")
		if events := nextAll(stream); len(events) != 0 {
			t.Fatalf("events %s, want none", kinds(events))
		}
		asPantoError(t, stream.Err(), panto.ErrServer)
		if n := len(receivedRequests(t)); n != 1 {
			t.Fatalf("%d requests, want 1", n)
		}
	})
	t.Run("NotRetryable", func(t *testing.T) {
		loadScenario(t, scenario(providerError(400, "invalid_request_error", "bad"), textAnswer("never")))
		cfg := testConfig("anthropic")
		cfg.Retry = fastRetry(2)
		stream := run(t, newAgent(t, cfg), "Hi")
		if events := nextAll(stream); len(events) != 0 {
			t.Fatalf("events %s, want none", kinds(events))
		}
		asPantoError(t, stream.Err(), panto.ErrInvalidRequest)
		if n := len(receivedRequests(t)); n != 1 {
			t.Fatalf("%d requests, want 1", n)
		}
	})
}

func TestErrorEventBeforeContentIsRetried(t *testing.T) {
	// After message_start only (Anthropic's first event): nothing beyond it reached the user.
	cut := textAnswer("Never shown")
	cut["stream_error"] = map[string]any{"type": "overloaded_error", "message": "Overloaded", "after_events": 1}
	loadScenario(t, scenario(cut, textAnswer("Hello world")))
	cfg := testConfig("anthropic")
	cfg.Retry = fastRetry(2)
	agent := newAgent(t, cfg)
	stream := run(t, agent, "Hi")
	events := nextAll(stream)
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(events) < 3 || events[0].Kind != panto.EventMessageStart || events[1].Kind != panto.EventProviderRetry {
		t.Fatalf("events %s, want message_start, provider_retry, then the message again", kinds(events))
	}
	if r := events[1]; r.Attempt != 1 || r.HTTPStatus != 0 || r.Text != "overloaded_error: Overloaded" {
		t.Fatalf("retry = %+v, want attempt 1, no HTTP status", r)
	}
	checkTextTurn(t, events[2:], "Hello world", "end_turn")
	if n := len(receivedRequests(t)); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
	conv := conversation(t, agent)
	if len(conv) != 2 || conv[1].Content[0].Text != "Hello world" || conv[1].StopReason != panto.StopEndTurn {
		t.Fatalf("conversation = %+v, want one assistant message", conv)
	}
}

func TestErrorEventAfterContentIsNotRetried(t *testing.T) {
	// message_start, content_block_start, ping, the first delta: then the error.
	cut := textAnswer("Hello big world")
	cut["stream_error"] = map[string]any{"type": "overloaded_error", "message": "Overloaded", "after_events": 4}
	loadScenario(t, scenario(cut, textAnswer("never")))
	cfg := testConfig("anthropic")
	cfg.Retry = fastRetry(2)
	agent := newAgent(t, cfg)
	stream := run(t, agent, "Hi")
	events := nextAll(stream)
	if kinds(events) != "message_start block_start content_delta" || events[2].Text != "Hello " {
		t.Fatalf("events %s (%+v)", kinds(events), events)
	}
	perr := asPantoError(t, stream.Err(), panto.ErrOverloaded)
	if perr.HTTPStatus != 0 || perr.Type != "overloaded_error" || perr.Message != "Overloaded" {
		t.Fatalf("error = %+v", perr)
	}
	if n := len(receivedRequests(t)); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
	// The failed message is not kept (the turn is rolled back), and it failed past the open
	// boundary: no reopen.
	if conv := conversation(t, agent); len(conv) != 0 {
		t.Fatalf("conversation = %+v, want none: the failed turn is rolled back", conv)
	}
	asPantoError(t, stream.Reopen(context.Background()), panto.ErrState)
	if !errors.Is(stream.Err(), panto.ErrOverloaded) {
		t.Fatalf("Err after the refused Reopen = %v", stream.Err())
	}
}

func TestTimeouts(t *testing.T) {
	for _, p := range providers {
		t.Run("idle/"+p.name, func(t *testing.T) {
			loadScenario(t, scenario(stalledAnswer(p.name), textAnswer("Again")))
			cfg := testConfig(p.name)
			cfg.Timeouts = &panto.Timeouts{Idle: 200 * time.Millisecond}
			agent := newAgent(t, cfg)
			stream := startStalled(t, context.Background(), agent)
			start := time.Now()
			if stream.Next() {
				t.Fatalf("Next = true with %+v during the stall", stream.Event())
			}
			waited := time.Since(start)
			perr := asPantoError(t, stream.Err(), panto.ErrTimeout)
			if perr.Type != "timeout_error" || perr.HTTPStatus != 0 || !strings.Contains(perr.Message, "idle_ms") {
				t.Fatalf("error = %+v", perr)
			}
			if errors.Is(stream.Err(), context.DeadlineExceeded) {
				t.Error("the library's timeout matches context.DeadlineExceeded")
			}
			if waited < 150*time.Millisecond || waited > 2*time.Second {
				t.Errorf("timed out after %v, want about 200ms", waited)
			}
			if n := len(receivedRequests(t)); n != 1 { // a timeout is not retried
				t.Fatalf("%d requests, want 1", n)
			}
			if conv := conversation(t, agent); len(conv) != 0 {
				t.Fatalf("conversation = %+v, want none: the failed turn is rolled back", conv)
			}
			asPantoError(t, stream.Reopen(context.Background()), panto.ErrState)
			again := run(t, agent, "Again?")
			if nextAll(again); again.Err() != nil {
				t.Fatalf("the turn after the timeout: %v", again.Err())
			}
		})
	}
	t.Run("first_byte", func(t *testing.T) {
		slow := textAnswer("late")
		slow["delay_ms"] = 2000
		loadScenario(t, scenario(slow))
		cfg := testConfig("anthropic")
		cfg.Timeouts = &panto.Timeouts{FirstByte: 150 * time.Millisecond}
		stream := run(t, newAgent(t, cfg), "Hi")
		start := time.Now()
		if events := nextAll(stream); len(events) != 0 {
			t.Fatalf("events %s", kinds(events))
		}
		perr := asPantoError(t, stream.Err(), panto.ErrTimeout)
		if perr.Type != "timeout_error" || !strings.Contains(perr.Message, "first_byte_ms") || time.Since(start) > time.Second {
			t.Fatalf("error = %+v after %v", perr, time.Since(start))
		}
	})
}

func TestContextCancelWhileBlocked(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			loadScenario(t, scenario(stalledAnswer(p.name), textAnswer("Again")))
			agent := newAgent(t, stallConfig(p.name))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stream := startStalled(t, ctx, agent)

			timer := time.AfterFunc(100*time.Millisecond, cancel)
			defer timer.Stop()
			start := time.Now()
			if stream.Next() {
				t.Fatalf("Next = true with %+v", stream.Event())
			}
			if d := time.Since(start); d > time.Second || d < 90*time.Millisecond {
				t.Fatalf("Next returned after %v, want promptly after the cancel at 100ms", d)
			}
			err := stream.Err()
			if !errors.Is(err, context.Canceled) || !errors.Is(err, panto.ErrCanceled) {
				t.Fatalf("Err = %v, want context.Canceled and ErrCanceled", err)
			}
			if perr := asPantoError(t, err, panto.ErrCanceled); perr.Type != "canceled_error" || perr.HTTPStatus != 0 {
				t.Fatalf("error = %+v", perr)
			}
			if stream.Next() || stream.Err() != err {
				t.Fatalf("not sticky: %v", stream.Err())
			}
			checkAborted(t, agent)
			asPantoError(t, stream.Reopen(context.Background()), panto.ErrState)
			checkNextTurnCarries(t, agent, 1)
		})
	}
}

func TestContextDeadlineWhileBlocked(t *testing.T) {
	loadScenario(t, scenario(stalledAnswer("anthropic"), textAnswer("Again")))
	agent := newAgent(t, stallConfig("anthropic"))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	stream := startStalled(t, ctx, agent)
	start := time.Now()
	if stream.Next() {
		t.Fatalf("Next = true with %+v", stream.Event())
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("Next returned after %v", d)
	}
	err := stream.Err()
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		t.Fatalf("Err = %v, want context.DeadlineExceeded", err)
	}
	if perr := asPantoError(t, err, panto.ErrTimeout); perr.Type != "timeout_error" {
		t.Fatalf("error = %+v", perr)
	}
	checkAborted(t, agent)
	checkNextTurnCarries(t, agent, 1)
}

func TestStreamCancel(t *testing.T) {
	loadScenario(t, scenario(stalledAnswer("anthropic"), textAnswer("Again")))
	agent := newAgent(t, stallConfig("anthropic"))
	stream := startStalled(t, context.Background(), agent)
	timer := time.AfterFunc(100*time.Millisecond, stream.Cancel)
	defer timer.Stop()
	start := time.Now()
	if stream.Next() {
		t.Fatalf("Next = true with %+v", stream.Event())
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("Next returned after %v", d)
	}
	err := stream.Err()
	if errors.Is(err, context.Canceled) {
		t.Errorf("Err %v matches context.Canceled, but no context was canceled", err)
	}
	if perr := asPantoError(t, err, panto.ErrCanceled); perr.Type != "canceled_error" || perr.Message == "" {
		t.Fatalf("error = %+v", perr)
	}
	stream.Cancel() // twice, and on a finished turn: harmless
	checkAborted(t, agent)
	checkNextTurnCarries(t, agent, 1)

	// Canceled before its first Next: the turn ends at once, with no request.
	loadScenario(t, scenario(textAnswer("never")))
	stream = run(t, agent, "Hi")
	stream.Cancel()
	if stream.Next() {
		t.Fatalf("Next = true after Cancel: %+v", stream.Event())
	}
	asPantoError(t, stream.Err(), panto.ErrCanceled)
	if n := len(receivedRequests(t)); n != 0 {
		t.Fatalf("%d requests after a cancel before the first Next", n)
	}
}

// The events come in batches: the whole answer has arrived when the program cancels after
// its first delta, yet the canceled turn keeps only what the program read (the rest of the
// batch is given back to the library), and nothing more comes out of Next.
func TestCancelKeepsOnlyWhatWasRead(t *testing.T) {
	for _, provider := range []string{"anthropic", "openai"} {
		t.Run(provider, func(t *testing.T) {
			whole := stalledAnswer(provider)
			delete(whole, "fault") // everything is sent
			loadScenario(t, scenario(whole, textAnswer("Again")))
			agent := newAgent(t, stallConfig(provider))
			stream := run(t, agent, "Hi")
			if !stream.Next() || stream.Event().Kind != panto.EventMessageStart {
				t.Fatalf("first event %+v, %v", stream.Event(), stream.Err())
			}
			time.Sleep(100 * time.Millisecond) // the rest arrives: the next batch holds it all
			for stream.Next() && stream.Event().Kind != panto.EventContentDelta {
			}
			if ev := stream.Event(); ev.Text != "Hello " {
				t.Fatalf("first delta %+v, %v", ev, stream.Err())
			}
			stream.Cancel()
			if stream.Next() {
				t.Fatalf("Next = true after Cancel: %+v", stream.Event())
			}
			asPantoError(t, stream.Err(), panto.ErrCanceled)
			checkAborted(t, agent)
			checkNextTurnCarries(t, agent, 1)
		})
	}
}

func TestCloseWhileBlocked(t *testing.T) {
	loadScenario(t, scenario(stalledAnswer("anthropic"), textAnswer("Again")))
	agent := newAgent(t, stallConfig("anthropic"))
	stream := startStalled(t, context.Background(), agent)

	done := make(chan bool)
	go func() { done <- stream.Next() }()
	time.Sleep(100 * time.Millisecond) // Next is in the library, waiting on the stall
	stream.Close()
	select {
	case got := <-done:
		if got {
			t.Fatalf("the pending Next returned true: %+v", stream.Event())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the pending Next did not return after Close")
	}
	checkClosedTurn(t, stream.Err())
	if err := stream.Reopen(context.Background()); !errors.Is(err, panto.ErrClosed) {
		t.Fatalf("Reopen after Close = %v, want ErrClosed", err)
	}
	stream.Close()
	checkAborted(t, agent)
	checkNextTurnCarries(t, agent, 1)
}

func TestAgentCloseWhileBlocked(t *testing.T) {
	loadScenario(t, scenario(stalledAnswer("openai")))
	agent, err := panto.NewAgent(stallConfig("openai"))
	if err != nil {
		t.Fatal(err)
	}
	stream := startStalled(t, context.Background(), agent)
	done := make(chan bool)
	go func() { done <- stream.Next() }()
	time.Sleep(100 * time.Millisecond)
	agent.Close()
	select {
	case got := <-done:
		if got || !errors.Is(stream.Err(), panto.ErrClosed) {
			t.Fatalf("the pending Next: %v, Err %v; want false, ErrClosed", got, stream.Err())
		}
	case <-time.After(time.Second):
		t.Fatal("the pending Next did not return within 1s of the agent's Close")
	}
	if _, err := agent.Conversation(); !errors.Is(err, panto.ErrClosed) {
		t.Fatalf("Conversation on the closed agent: %v", err)
	}
}

func TestReopenAfterBadRequest(t *testing.T) {
	loadScenario(t, scenario(
		providerError(400, "invalid_request_error", "max_tokens: 999999 > 64000, the model's limit"),
		textAnswer("Hello world")))
	cfg := testConfig("anthropic")
	cfg.MaxTokens = 999999
	agent := newAgent(t, cfg)
	stream := run(t, agent, "Hi")
	if events := nextAll(stream); len(events) != 0 {
		t.Fatalf("events %s", kinds(events))
	}
	perr := asPantoError(t, stream.Err(), panto.ErrInvalidRequest)
	if perr.HTTPStatus != 400 || perr.Type != "invalid_request_error" {
		t.Fatalf("error = %+v", perr)
	}

	// A context that is done refuses the reopen and leaves the stream as it was.
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := stream.Reopen(canceled); !errors.Is(err, context.Canceled) {
		t.Fatalf("Reopen(canceled ctx) = %v", err)
	}
	if stream.Err() != perr {
		t.Fatalf("Err after a refused Reopen = %v", stream.Err())
	}

	if err := agent.SetConfig(panto.ConfigPatch{MaxTokens: 1000}); err != nil {
		t.Fatalf("SetConfig after the failure: %v", err)
	}
	if err := stream.Reopen(context.Background()); err != nil {
		t.Fatalf("Reopen: %v", err)
	}
	if stream.Err() != nil {
		t.Fatalf("Err after Reopen = %v, want nil", stream.Err())
	}
	events := nextAll(stream)
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	checkTextTurn(t, events, "Hello world", "end_turn")

	reqs := receivedRequests(t)
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if b := requestBody(t, 1); b["max_tokens"] != 1000.0 {
		t.Errorf("second request max_tokens = %v, want 1000", b["max_tokens"])
	}
	if msgs := requestMessages(t, 1); len(msgs) != 1 || strings.Count(msgs[0], `"Hi"`) != 1 {
		t.Fatalf("second request messages = %v, want the user message once", msgs)
	}
	if conv := conversation(t, agent); len(conv) != 2 || conv[0].Role != "user" || conv[1].Role != "assistant" {
		t.Fatalf("conversation = %+v", conv)
	}
	// Over: nothing to reopen.
	asPantoError(t, stream.Reopen(context.Background()), panto.ErrState)
}

func TestReopenRefusals(t *testing.T) {
	loadScenario(t, scenario(providerError(400, "invalid_request_error", "bad"), textAnswer("one"), textAnswer("two")))
	agent := newAgent(t, testConfig("openai"))

	stream := run(t, agent, "Hi")
	// Not failed (not even started).
	asPantoError(t, stream.Reopen(context.Background()), panto.ErrState)
	nextAll(stream)
	asPantoError(t, stream.Err(), panto.ErrInvalidRequest)

	// Another stream of the agent is unfinished.
	other := run(t, agent, "Other")
	if err := agent.SetConfig(panto.ConfigPatch{MaxTokens: 10}); !errors.Is(err, panto.ErrBusy) {
		t.Fatalf("SetConfig while a stream is unfinished = %v, want ErrBusy", err)
	}
	asPantoError(t, stream.Reopen(context.Background()), panto.ErrBusy)
	if !errors.Is(stream.Err(), panto.ErrInvalidRequest) {
		t.Fatalf("Err after a refused Reopen = %v", stream.Err())
	}
	if nextAll(other); other.Err() != nil {
		t.Fatal(other.Err())
	}
	// The other turn is over: now it reopens, and gets the next answer.
	if err := stream.Reopen(context.Background()); err != nil {
		t.Fatalf("Reopen: %v", err)
	}
	if events := nextAll(stream); stream.Err() != nil || events[len(events)-1].Kind != panto.EventMessageComplete {
		t.Fatalf("the reopened turn: %v", stream.Err())
	}

	// Closed.
	loadScenario(t, scenario(providerError(400, "invalid_request_error", "bad")))
	stream = run(t, agent, "Again")
	nextAll(stream)
	stream.Close()
	if err := stream.Reopen(context.Background()); !errors.Is(err, panto.ErrClosed) {
		t.Fatalf("Reopen after Close = %v, want ErrClosed", err)
	}
}

func TestThinkingLevels(t *testing.T) {
	levels := []struct {
		level  panto.Thinking
		budget float64
	}{
		{panto.ThinkingMinimal, 1024}, {panto.ThinkingLow, 2048}, {panto.ThinkingMedium, 8192},
		{panto.ThinkingHigh, 16384}, {panto.ThinkingOff, 0},
	}
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			var answers []map[string]any
			for range len(levels) + 1 {
				answers = append(answers, textAnswer("ok"))
			}
			loadScenario(t, scenario(answers...))
			cfg := testConfig(p.name)
			cfg.MaxTokens = 1000
			cfg.Thinking = panto.ThinkingMedium
			agent := newAgent(t, cfg)
			check := func(i int, level panto.Thinking, budget float64) {
				t.Helper()
				body := requestBody(t, i)
				switch p.name {
				case "anthropic":
					if budget == 0 {
						if _, ok := body["thinking"]; ok || body["max_tokens"] != 1000.0 {
							t.Errorf("%s: thinking %v, max_tokens %v; want none, 1000", level, body["thinking"], body["max_tokens"])
						}
						return
					}
					want := map[string]any{"type": "enabled", "budget_tokens": budget}
					if mustJSON(t, body["thinking"]) != mustJSON(t, want) {
						t.Errorf("%s: thinking = %v, want %v", level, body["thinking"], want)
					}
					// max_tokens (1000) is raised above the budget: the budget comes on top.
					if wantMax := 1000 + budget; body["max_tokens"] != wantMax {
						t.Errorf("%s: max_tokens = %v, want %v", level, body["max_tokens"], wantMax)
					}
				case "openai":
					effort, ok := body["reasoning_effort"]
					if budget == 0 && ok || budget != 0 && effort != string(level) {
						t.Errorf("%s: reasoning_effort = %v", level, effort)
					}
				}
			}
			for i := range len(levels) + 1 {
				level, budget := panto.ThinkingMedium, 8192.0 // the Config's, first
				if i > 0 {
					level, budget = levels[i-1].level, levels[i-1].budget
					if err := agent.SetConfig(panto.ConfigPatch{Thinking: level}); err != nil {
						t.Fatal(err)
					}
				}
				stream := run(t, agent, fmt.Sprint("turn ", i))
				if nextAll(stream); stream.Err() != nil {
					t.Fatal(stream.Err())
				}
				check(i, level, budget)
			}
		})
	}
}

func TestSetConfig(t *testing.T) {
	loadScenario(t, scenario(textAnswer("one"), textAnswer("two"), textAnswer("three")))
	agent := newAgent(t, noCacheConfig("anthropic")) // the system prompt as a plain string

	// Busy while a stream is unfinished.
	stream := run(t, agent, "Hi")
	err := agent.SetConfig(panto.ConfigPatch{System: panto.Ptr("Be brief.")})
	if perr := asPantoError(t, err, panto.ErrBusy); perr.Message == "" {
		t.Fatalf("error = %+v, want a message", perr)
	}
	stream.Close()
	if err := agent.SetConfig(panto.ConfigPatch{System: panto.Ptr("Be brief."), Model: "other-model"}); err != nil {
		t.Fatalf("SetConfig after Close: %v", err)
	}

	// Refused values change nothing.
	for _, bad := range []func() error{
		func() error { return agent.SetConfigJSON([]byte(`{"thinking":"lots"}`)) },
		func() error { return agent.SetConfig(panto.ConfigPatch{Retry: &panto.RetryPolicy{MaxRetries: 1000}}) },
		func() error { return agent.SetConfig(panto.ConfigPatch{Thinking: "lots", Model: "third-model"}) },
		func() error { return agent.SetConfigJSON([]byte(`{"tools":[]}`)) },
		func() error { return agent.SetConfigJSON([]byte(`{"temperature":3}`)) }, // Anthropic: 0 to 1
	} {
		if perr := asPantoError(t, bad(), panto.ErrConfig); perr.Message == "" {
			t.Fatalf("error = %+v, want a reason", perr)
		}
	}
	stream = run(t, agent, "Hi again")
	if nextAll(stream); stream.Err() != nil {
		t.Fatal(stream.Err())
	}
	body := requestBody(t, 0)
	if body["system"] != "Be brief." || body["model"] != "other-model" {
		t.Fatalf("request system %v, model %v: want the changes made, and only them", body["system"], body["model"])
	}
	if _, ok := body["thinking"]; ok {
		t.Fatalf("a refused change was applied: thinking %v", body["thinking"])
	}

	// A pointer to "" removes the system prompt.
	if err := agent.SetConfig(panto.ConfigPatch{System: panto.Ptr("")}); err != nil {
		t.Fatal(err)
	}
	stream = run(t, agent, "Third")
	if nextAll(stream); stream.Err() != nil {
		t.Fatal(stream.Err())
	}
	if _, ok := requestBody(t, 1)["system"]; ok {
		t.Fatal("the system prompt is still sent")
	}

	agent.Close()
	if err := agent.SetConfig(panto.ConfigPatch{MaxTokens: 5}); !errors.Is(err, panto.ErrClosed) {
		t.Fatalf("SetConfig on a closed agent = %v", err)
	}
}

func TestResilienceConfigJSON(t *testing.T) {
	cfg := panto.Config{Provider: "openai", Model: "m", Thinking: panto.ThinkingLow,
		Retry:    &panto.RetryPolicy{MaxRetries: panto.NoRetries, InitialDelay: 1500 * time.Microsecond},
		Timeouts: &panto.Timeouts{Idle: panto.NoTimeout, Total: 2 * time.Second}}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, b, `{"provider":"openai","model":"m","thinking":"low",
		"retry":{"max_retries":0,"initial_delay_ms":2},"timeouts":{"idle_ms":0,"total_ms":2000}}`)

	b, err = json.Marshal(panto.Config{Provider: "openai", Model: "m", Retry: &panto.RetryPolicy{MaxRetries: 3}})
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, b, `{"provider":"openai","model":"m","retry":{"max_retries":3}}`)

	b, err = json.Marshal(panto.ConfigPatch{})
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, b, `{}`)
	b, err = json.Marshal(panto.ConfigPatch{
		Model: "m2", BaseURL: panto.Ptr(""), APIKey: panto.Ptr("k"), MaxToolIterations: panto.Ptr(0),
		Capabilities: []string{}, RemoveReadTool: true, Thinking: panto.ThinkingOff,
		Retry: &panto.RetryPolicy{MaxDelay: time.Second}, Timeouts: &panto.Timeouts{Connect: 1500 * time.Microsecond, FirstByte: time.Minute},
	})
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, b, `{"model":"m2","base_url":null,"api_key":"k","max_tool_iterations":0,"capabilities":[],
		"read_tool":null,"thinking":"off","retry":{"max_delay_ms":1000},"timeouts":{"connect_ms":2,"first_byte_ms":60000}}`)
	if _, err := json.Marshal(panto.ConfigPatch{ReadTool: &panto.ReadToolConfig{Root: "/"}, RemoveReadTool: true}); err == nil {
		t.Fatal("a patch that sets and removes the read tool was accepted")
	}

	// The library accepts them all.
	agent := newAgent(t, cfg)
	if err := agent.SetConfig(panto.ConfigPatch{Retry: &panto.RetryPolicy{MaxRetries: 1}, Timeouts: &panto.Timeouts{Connect: 5 * time.Second, Total: panto.NoTimeout}}); err != nil {
		t.Fatal(err)
	}
}

func TestRedactedThinking(t *testing.T) {
	body := sse(
		"message_start", `{"type":"message_start","message":{"id":"msg_r","type":"message","role":"assistant","model":"test-model","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}`,
		"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4a"}}`,
		"content_block_stop", `{"type":"content_block_stop","index":0}`,
		"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
		"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Done."}}`,
		"content_block_stop", `{"type":"content_block_stop","index":1}`,
		"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":9}}`,
		"message_stop", `{"type":"message_stop"}`)
	loadScenario(t, scenario(map[string]any{"body": body}, textAnswer("again")))
	cfg := testConfig("anthropic")
	cfg.Thinking = panto.ThinkingLow
	agent := newAgent(t, cfg)
	stream := run(t, agent, "Hi")
	events := nextAll(stream)
	if stream.Err() != nil {
		t.Fatal(stream.Err())
	}
	if kinds(events) != "message_start block_start block_complete block_start content_delta block_complete message_end message_complete" {
		t.Fatalf("events %s", kinds(events))
	}
	if ev := events[2]; ev.BlockKind != panto.BlockRedactedThinking || ev.Index != 0 || ev.Text != "EmwKAhgBEgy3va3pzix/LafPsn4a" {
		t.Fatalf("redacted block = %+v", ev)
	}
	if panto.BlockRedactedThinking.String() != "redacted_thinking" {
		t.Errorf("name %q", panto.BlockRedactedThinking.String())
	}
	conv := conversation(t, agent)
	if len(conv) != 2 || len(conv[1].Content) != 2 || conv[1].Content[0].Type != "redacted_thinking" ||
		conv[1].Content[0].Text != "EmwKAhgBEgy3va3pzix/LafPsn4a" {
		t.Fatalf("conversation = %+v", conv)
	}
	// It goes back to the provider as it came.
	stream = run(t, agent, "More")
	if nextAll(stream); stream.Err() != nil {
		t.Fatal(stream.Err())
	}
	if msgs := requestMessages(t, 1); len(msgs) != 3 ||
		!strings.Contains(msgs[1], `{"data":"EmwKAhgBEgy3va3pzix/LafPsn4a","type":"redacted_thinking"}`) {
		t.Fatalf("messages = %v", msgs)
	}
}

// TestNoGoroutineLeak runs turns with cancelable contexts, canceled while blocked or not
// at all, and checks that no goroutine outlives them.
func TestNoGoroutineLeak(t *testing.T) {
	settle := func() int {
		http.DefaultClient.CloseIdleConnections() // the emulator control calls keep some
		runtime.GC()
		return runtime.NumGoroutine()
	}
	var answers []map[string]any
	for range 5 {
		answers = append(answers, stalledAnswer("anthropic"), textAnswer("Hello world"))
	}
	loadScenario(t, scenario(answers...))
	agent := newAgent(t, stallConfig("anthropic"))
	live, cancelLive := context.WithCancel(context.Background())
	defer cancelLive()
	before := settle()
	for range 5 {
		ctx, cancel := context.WithCancel(context.Background())
		stream := startStalled(t, ctx, agent)
		time.AfterFunc(20*time.Millisecond, cancel)
		if stream.Next() || !errors.Is(stream.Err(), context.Canceled) {
			t.Fatalf("Next after cancel: %v", stream.Err())
		}
		stream.Close()

		// A context that stays live: nothing may wait on it after the turn.
		stream, err := agent.Run(live, "again")
		if err != nil {
			t.Fatal(err)
		}
		if nextAll(stream); stream.Err() != nil {
			t.Fatal(stream.Err())
		}
		stream.Close()
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		after := settle()
		if after <= before {
			break
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines before, %d after:\n%s", before, after, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCancelDuringRetryWait(t *testing.T) {
	limited := providerError(429, "rate_limit_error", "Slow down")
	limited["headers"] = map[string]any{"retry-after-ms": "5000"}
	loadScenario(t, scenario(limited, textAnswer("never")))
	agent := newAgent(t, testConfig("openai"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := agent.Run(ctx, "Hi")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	if !stream.Next() || stream.Event().Kind != panto.EventProviderRetry || stream.Event().Delay != 5*time.Second {
		t.Fatalf("first event %+v, %v; want a retry in 5s", stream.Event(), stream.Err())
	}
	timer := time.AfterFunc(100*time.Millisecond, cancel)
	defer timer.Stop()
	start := time.Now()
	if stream.Next() {
		t.Fatalf("Next = true with %+v", stream.Event())
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("the canceled retry wait lasted %v", d)
	}
	if err := stream.Err(); !errors.Is(err, context.Canceled) || !errors.Is(err, panto.ErrCanceled) {
		t.Fatalf("Err = %v", err)
	}
	if n := len(receivedRequests(t)); n != 1 {
		t.Fatalf("%d requests, want 1: the retry was not sent", n)
	}
	if conv := conversation(t, agent); len(conv) != 0 {
		t.Fatalf("conversation = %+v, want none: nothing arrived, the turn is rolled back", conv)
	}
}
