package panto_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"panto.dev/panto"
)

var providers = []struct {
	name   string
	path   string // the endpoint the agent calls
	stop   string // the provider's own stop reason for end_turn
	format panto.ToolFormat
}{
	{"anthropic", "/v1/messages", "end_turn", panto.FormatAnthropic},
	{"openai", "/v1/chat/completions", "stop", panto.FormatOpenAI},
}

func testConfig(provider string) panto.Config {
	return panto.Config{Provider: provider, Model: "test-model", BaseURL: emulatorURL, APIKey: "test-key"}
}

// noCacheConfig is testConfig without Anthropic's automatic cache breakpoints, for the tests
// that compare whole request bodies (docs/requests.md, "Prompt caching", has the breakpoints).
func noCacheConfig(provider string) panto.Config {
	cfg := testConfig(provider)
	if provider == "anthropic" {
		cfg.Cache = &panto.Cache{Mode: "off"}
	}
	return cfg
}

func newAgent(t *testing.T, cfg panto.Config) *panto.Agent {
	t.Helper()
	trackLibrary()
	agent, err := panto.NewAgent(cfg)
	if err != nil {
		t.Fatalf("NewAgent: %v", err)
	}
	t.Cleanup(func() { agent.Close() })
	return agent
}

func run(t *testing.T, agent *panto.Agent, text string) *panto.Stream {
	t.Helper()
	stream, err := agent.Run(context.Background(), text)
	if err != nil {
		t.Fatalf("Run(%q): %v", text, err)
	}
	t.Cleanup(func() { stream.Close() })
	return stream
}

// checkTextTurn checks the events of a turn answered with one text block.
func checkTextTurn(t *testing.T, events []panto.Event, want, providerStop string) {
	t.Helper()
	if len(events) < 5 {
		t.Fatalf("got %d events, want at least 5: %+v", len(events), events)
	}
	if ev := events[0]; ev.Kind != panto.EventMessageStart || ev.ID == "" || ev.Model == "" {
		t.Errorf("first event = %+v, want a message_start with an id and a model", ev)
	}
	if ev := events[1]; ev.Kind != panto.EventBlockStart || ev.Index != 0 || ev.BlockKind != panto.BlockText {
		t.Errorf("second event = %+v, want block_start 0 text", ev)
	}
	var deltas []string
	for _, ev := range events[2 : len(events)-3] {
		if ev.Kind != panto.EventContentDelta || ev.Index != 0 || ev.BlockKind != panto.BlockText {
			t.Errorf("event %+v, want a text content_delta", ev)
		}
		deltas = append(deltas, ev.Text)
	}
	if got := strings.Join(deltas, ""); got != want || len(deltas) < 2 {
		t.Errorf("deltas %q, want at least two fragments making %q", deltas, want)
	}
	if ev := events[len(events)-3]; ev.Kind != panto.EventBlockComplete || ev.Text != want || ev.BlockKind != panto.BlockText {
		t.Errorf("block complete = %+v, want the whole text %q", ev, want)
	}
	last := events[len(events)-1]
	// One message: its MessageEnd says what the turn's MessageComplete says.
	if end := events[len(events)-2]; end.Kind != panto.EventMessageEnd || end.StopReason != last.StopReason ||
		end.ProviderStopReason != last.ProviderStopReason || end.Usage != last.Usage {
		t.Errorf("message end = %+v, want the stop reason and usage of %+v", end, last)
	}
	if last.Kind != panto.EventMessageComplete || last.StopReason != panto.StopEndTurn ||
		last.ProviderStopReason != providerStop {
		t.Errorf("last event = %+v, want message_complete end_turn (%s)", last, providerStop)
	}
	if last.Usage.InputTokens != 12 || last.Usage.OutputTokens != 3 {
		t.Errorf("usage = %+v, want 12 in, 3 out", last.Usage)
	}
}

func TestTextTurnIter(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			loadScenario(t, scenario(textAnswer("Hello world")))
			agent := newAgent(t, testConfig(p.name))
			stream := run(t, agent, "Hi")
			var events []panto.Event
			for ev := range stream.Iter {
				events = append(events, ev)
			}
			if err := stream.Err(); err != nil {
				t.Fatalf("Err: %v", err)
			}
			checkTextTurn(t, events, "Hello world", p.stop)

			reqs := receivedRequests(t)
			if len(reqs) != 1 || reqs[0].Path != p.path {
				t.Fatalf("requests = %+v, want one to %s", reqs, p.path)
			}
		})
	}
}

func TestTextTurnNext(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			loadScenario(t, scenario(textAnswer("Hello world")))
			agent := newAgent(t, testConfig(p.name))
			stream := run(t, agent, "Hi")
			var events []panto.Event
			for stream.Next() {
				events = append(events, stream.Event())
			}
			if err := stream.Err(); err != nil {
				t.Fatalf("Err: %v", err)
			}
			checkTextTurn(t, events, "Hello world", p.stop)
			if err := stream.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
		})
	}
}

func TestNextAfterDoneStaysFalse(t *testing.T) {
	loadScenario(t, scenario(textAnswer("Hello world")))
	stream := run(t, newAgent(t, testConfig("anthropic")), "Hi")
	n := 0
	for stream.Next() {
		n++
	}
	if n == 0 {
		t.Fatal("no events")
	}
	for i := 0; i < 3; i++ {
		if stream.Next() {
			t.Fatalf("Next after the end returned true: %+v", stream.Event())
		}
		if err := stream.Err(); err != nil {
			t.Fatalf("Err after the end = %v, want nil", err)
		}
		if ev := stream.Event(); ev != (panto.Event{}) {
			t.Fatalf("Event after the end = %+v, want the zero Event", ev)
		}
	}
	// Closing a finished stream, twice, changes nothing.
	stream.Close()
	stream.Close()
	if stream.Next() || stream.Err() != nil {
		t.Fatalf("after Close: Next true or Err %v", stream.Err())
	}
}

func TestBreakClosesStream(t *testing.T) {
	loadScenario(t, scenario(textAnswer("First answer"), textAnswer("Second answer")))
	agent := newAgent(t, testConfig("anthropic"))

	stream := run(t, agent, "one")
	for ev := range stream.Iter {
		if ev.Kind != panto.EventMessageStart {
			t.Fatalf("first event = %+v", ev)
		}
		// While this stream is unfinished the agent refuses another turn.
		if _, err := agent.Run(context.Background(), "too early"); !errors.Is(err, panto.ErrBusy) {
			t.Fatalf("Run with an unfinished stream: err = %v, want ErrBusy", err)
		}
		break
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("Err after break = %v, want nil", err)
	}
	if stream.Next() || !errors.Is(stream.Err(), panto.ErrClosed) || !errors.Is(stream.Err(), panto.ErrCanceled) {
		t.Fatalf("Next after break: Err = %v, want ErrClosed and ErrCanceled", stream.Err())
	}

	// The break freed the stream: the agent takes a new turn.
	second := run(t, agent, "two")
	var text string
	for ev := range second.Iter {
		if ev.Kind == panto.EventBlockComplete {
			text = ev.Text
		}
	}
	if err := second.Err(); err != nil || text != "Second answer" {
		t.Fatalf("second turn: text %q, err %v", text, err)
	}

	// The abandoned turn ended by the close policy (TestBreakKeepsWhatWasSeen shows what
	// it keeps; here nothing, so it was rolled back).
	conv, err := agent.Conversation()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(conv); n < 2 || conv[n-2].Role != "user" || conv[n-1].Content[0].Text != "Second answer" {
		t.Fatalf("conversation = %s", mustJSON(t, conv))
	}
}

func TestAuthenticationError(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			loadScenario(t, scenario(map[string]any{
				"status": 401,
				"error":  map[string]any{"type": "authentication_error", "message": "bad key"},
			}))
			stream := run(t, newAgent(t, testConfig(p.name)), "Hi")
			if stream.Next() {
				t.Fatalf("Next = true with %+v, want false", stream.Event())
			}
			err := stream.Err()
			if !errors.Is(err, panto.ErrAuthentication) {
				t.Fatalf("Err = %v, want one matching ErrAuthentication", err)
			}
			if errors.Is(err, panto.ErrRateLimit) || errors.Is(err, context.Canceled) {
				t.Fatalf("Err %v matches another error too", err)
			}
			var perr *panto.Error
			if !errors.As(err, &perr) {
				t.Fatalf("Err %T is not a *panto.Error", err)
			}
			if perr.Code != panto.ErrAuthentication || perr.HTTPStatus != 401 ||
				perr.Type != "authentication_error" || !strings.Contains(perr.Message, "bad key") {
				t.Fatalf("error = %+v", perr)
			}
			if !strings.HasPrefix(perr.RequestID, "req_emu_") {
				t.Errorf("RequestID = %q, want the emulator's request id", perr.RequestID)
			}
			if s := err.Error(); !strings.Contains(s, "authentication") || !strings.Contains(s, "401") {
				t.Errorf("Error() = %q", s)
			}
			// Sticky: the same error again, without a new request.
			if stream.Next() || stream.Err() != err {
				t.Fatalf("second Next: Err = %v, want the same error", stream.Err())
			}
			if n := len(receivedRequests(t)); n != 1 {
				t.Fatalf("%d requests, want 1", n)
			}
		})
	}
}

func TestCanceledContext(t *testing.T) {
	loadScenario(t, scenario(textAnswer("Hello world"), textAnswer("Again")))
	agent := newAgent(t, testConfig("anthropic"))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := run(t, agent, "Hi")
	streamCtx, err := agent.Run(ctx, "ignored")
	if !errors.Is(err, panto.ErrBusy) || streamCtx != nil {
		t.Fatalf("Run while busy: %v", err)
	}
	stream.Close()

	stream, err = agent.Run(ctx, "Hi")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	if !stream.Next() {
		t.Fatalf("first Next: %v", stream.Err())
	}
	cancel()
	if stream.Next() {
		t.Fatalf("Next after cancel returned %+v", stream.Event())
	}
	err = stream.Err()
	if !errors.Is(err, context.Canceled) || !errors.Is(err, panto.ErrCanceled) {
		t.Fatalf("Err = %v, want context.Canceled and panto.ErrCanceled", err)
	}
	if stream.Next() || stream.Err() != err {
		t.Fatalf("cancellation is not sticky: %v", stream.Err())
	}

	// The canceled stream was freed: a new turn runs.
	again := run(t, agent, "Again?")
	for again.Next() {
	}
	if err := again.Err(); err != nil {
		t.Fatalf("turn after a cancellation: %v", err)
	}

	// A context that is already done refuses the turn at once.
	if _, err := agent.Run(ctx, "late"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run with a canceled context: err = %v", err)
	}
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	_, err = agent.Run(expired, "late")
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, panto.ErrTimeout) {
		t.Fatalf("Run past a deadline: err = %v", err)
	}
}

func TestBadConfig(t *testing.T) {
	cases := []struct {
		name   string
		config string
	}{
		{"unknown provider", `{"provider": "nobody", "model": "m", "api_key": "k"}`},
		{"no model", `{"provider": "anthropic", "api_key": "k"}`},
		{"unknown key", `{"provider": "anthropic", "model": "m", "api_key": "k", "temperature_x": 1}`},
		{"wrong type", `{"provider": "anthropic", "model": "m", "api_key": "k", "max_tokens": "many"}`},
		{"not json", `{"provider": `},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			agent, err := panto.NewAgentJSON([]byte(c.config))
			if err == nil {
				agent.Close()
				t.Fatal("NewAgentJSON accepted the configuration")
			}
			var perr *panto.Error
			if !errors.As(err, &perr) || !errors.Is(err, panto.ErrConfig) || perr.Message == "" {
				t.Fatalf("err = %#v, want a *panto.Error with code config and a message", err)
			}
		})
	}
	if _, err := panto.NewAgent(panto.Config{Provider: "anthropic"}); !errors.Is(err, panto.ErrConfig) {
		t.Fatalf("NewAgent without a model: %v", err)
	}
	// The library judges the bytes: a NUL after the object is not JSON.
	if _, err := panto.NewAgentJSON([]byte("{\"provider\": \"anthropic\"}\x00")); !errors.Is(err, panto.ErrConfig) {
		t.Fatalf("NewAgentJSON with a NUL byte: %v", err)
	}
}

func TestMultiTurnConversation(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			loadScenario(t, scenario(textAnswer("Hello Ada"), textAnswer("Your name is Ada")))
			cfg := testConfig(p.name)
			cfg.System = "Be brief."
			cfg.MaxTokens = 64
			agent := newAgent(t, cfg)
			for _, turn := range []string{"My name is Ada", "What is my name?"} {
				stream := run(t, agent, turn)
				for stream.Next() {
				}
				if err := stream.Err(); err != nil {
					t.Fatalf("turn %q: %v", turn, err)
				}
			}
			conv, err := agent.Conversation()
			if err != nil {
				t.Fatal(err)
			}
			usage := &panto.Usage{InputTokens: 12, OutputTokens: 3}
			want := []panto.Message{
				{Role: "user", Content: []panto.ContentBlock{{Type: "text", Text: "My name is Ada"}}},
				{Role: "assistant", Content: []panto.ContentBlock{{Type: "text", Text: "Hello Ada"}},
					Provider: p.name, Model: "test-model", StopReason: panto.StopEndTurn, Usage: usage},
				{Role: "user", Content: []panto.ContentBlock{{Type: "text", Text: "What is my name?"}}},
				{Role: "assistant", Content: []panto.ContentBlock{{Type: "text", Text: "Your name is Ada"}},
					Provider: p.name, Model: "test-model", StopReason: panto.StopEndTurn, Usage: usage},
			}
			if got, _ := json.Marshal(conv); string(got) != mustJSON(t, want) {
				t.Fatalf("conversation = %s\nwant %s", got, mustJSON(t, want))
			}
			raw, err := agent.ConversationJSON()
			if err != nil || !json.Valid(raw) {
				t.Fatalf("ConversationJSON: %s, %v", raw, err)
			}

			// The second request carried the history and the configuration.
			reqs := receivedRequests(t)
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			body := string(reqs[1].Body)
			for _, s := range []string{"My name is Ada", "Hello Ada", "What is my name?", "Be brief.", "test-model"} {
				if !strings.Contains(body, s) {
					t.Errorf("second request lacks %q: %s", s, body)
				}
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCloseWhileNextWaits(t *testing.T) {
	// The answer comes slowly, so Next is waiting in the library when Close is called.
	slow := textAnswer("Hello world")
	slow["delay_ms"] = 400
	loadScenario(t, scenario(slow, textAnswer("Next turn")))
	agent := newAgent(t, testConfig("anthropic"))
	stream := run(t, agent, "Hi")

	done := make(chan bool)
	go func() { done <- stream.Next() }()
	time.Sleep(100 * time.Millisecond)
	stream.Close()
	select {
	case got := <-done:
		if got {
			t.Fatalf("the pending Next returned true after Close: %+v", stream.Event())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the pending Next did not return")
	}
	if !errors.Is(stream.Err(), panto.ErrClosed) || !errors.Is(stream.Err(), panto.ErrCanceled) {
		t.Fatalf("Err = %v, want ErrClosed and ErrCanceled", stream.Err())
	}
	next := run(t, agent, "again")
	for next.Next() {
	}
	if err := next.Err(); err != nil {
		t.Fatalf("turn after the close: %v", err)
	}
}

func TestAgentCloseClosesStreams(t *testing.T) {
	loadScenario(t, scenario(textAnswer("Hello world")))
	agent, err := panto.NewAgent(testConfig("anthropic"))
	if err != nil {
		t.Fatal(err)
	}
	stream, err := agent.Run(context.Background(), "Hi")
	if err != nil {
		t.Fatal(err)
	}
	if !stream.Next() {
		t.Fatal(stream.Err())
	}
	if err := agent.Close(); err != nil {
		t.Fatal(err)
	}
	agent.Close()
	if stream.Next() || !errors.Is(stream.Err(), panto.ErrClosed) {
		t.Fatalf("stream of a closed agent: Err = %v, want ErrClosed", stream.Err())
	}
	stream.Close()
	if _, err := agent.Run(context.Background(), "Hi"); !errors.Is(err, panto.ErrClosed) {
		t.Fatalf("Run on a closed agent: %v", err)
	}
	if _, err := agent.Conversation(); !errors.Is(err, panto.ErrClosed) {
		t.Fatalf("Conversation on a closed agent: %v", err)
	}
}

// Run passes the text as it is: a NUL byte is a character, which reaches the model.
func TestRunPassesNUL(t *testing.T) {
	loadScenario(t, scenario(textAnswer("Ok")))
	agent := newAgent(t, testConfig("anthropic"))
	stream := run(t, agent, "a\x00b")
	for range stream.Iter {
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	conv, err := agent.Conversation()
	if err != nil {
		t.Fatal(err)
	}
	if len(conv) != 2 || conv[0].Content[0].Text != "a\x00b" {
		t.Fatalf("conversation = %+v", conv)
	}
	var body struct {
		Messages []struct {
			Content []struct{ Text string }
		}
	}
	if err := json.Unmarshal(receivedRequests(t)[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Messages) != 1 || body.Messages[0].Content[0].Text != "a\x00b" {
		t.Fatalf("request = %s", receivedRequests(t)[0].Body)
	}
}

func TestNames(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{panto.EventMessageStart.String(), "message_start"},
		{panto.EventContentDelta.String(), "content_delta"},
		{panto.EventMessageComplete.String(), "message_complete"},
		{panto.EventMessageEnd.String(), "message_end"},
		{panto.EventToolDetails.String(), "tool_details"},
		{panto.EventToolCallStart.String(), "tool_call_start"},
		{panto.EventToolResult.String(), "tool_result"},
		{panto.ErrResultPending.String(), "result_pending"},
		{panto.ErrNoSuchCall.String(), "no_such_call"},
		{panto.ErrCapability.String(), "capability"},
		{panto.ErrToolLoop.String(), "tool_loop"},
		{panto.BlockToolCall.String(), "tool_call"},
		{panto.StopEndTurn.String(), "end_turn"},
		{panto.StopMaxTokens.String(), "max_tokens"},
		{panto.ErrAuthentication.String(), "authentication"},
		{panto.ErrBusy.Error(), "panto: busy"},
		{panto.StopReason(12345).String(), "unknown"},
	} {
		if c.got != c.want {
			t.Errorf("name %q, want %q", c.got, c.want)
		}
	}
	if v := panto.LibraryVersion(); v != panto.Version {
		t.Errorf("LibraryVersion() = %q, want the module's Version %q", v, panto.Version)
	}
}
