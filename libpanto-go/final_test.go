package panto_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"panto.dev/panto"
)

func TestFinalMessageRunsTheTurnAndItsTools(t *testing.T) {
	loadScenario(t, scenario(
		toolUse("Checking.", "call_1", "get_weather", map[string]any{"city": "Paris"}),
		textAnswer("Sunny in Paris")))
	cfg := testConfig("anthropic")
	cfg.Tools = []panto.Tool{panto.MustNewTool("", "Weather.",
		func(_ context.Context, in GetWeather) (string, error) { return "sunny in " + in.City, nil })}
	stream := run(t, newAgent(t, cfg), "Weather?")
	msg, err := stream.FinalMessage()
	if err != nil {
		t.Fatal(err)
	}
	if msg.Role != "assistant" || msg.Text() != "Sunny in Paris" || msg.StopReason != panto.StopEndTurn ||
		msg.Usage == nil || msg.Usage.InputTokens != 12 || msg.Usage.OutputTokens != 3 {
		t.Fatalf("message = %+v (usage %+v)", msg, msg.Usage)
	}
	// The turn's usage sums its two messages.
	if u := stream.Usage(); u.InputTokens != 32 || u.OutputTokens != 10 {
		t.Errorf("Usage = %+v, want 32 in, 10 out", u)
	}
	again, err := stream.FinalMessage()
	if err != nil || again.Text() != msg.Text() {
		t.Errorf("FinalMessage again = %+v, %v", again, err)
	}
	if stream.Next() || stream.Err() != nil {
		t.Errorf("Next after FinalMessage: %v", stream.Err())
	}
}

func TestCompleteAndText(t *testing.T) {
	loadScenario(t, scenario(textAnswer("Two, three, five")))
	agent := newAgent(t, testConfig("openai"))
	msg, err := agent.Complete(context.Background(), "Primes?")
	if err != nil {
		t.Fatal(err)
	}
	if msg.Text() != "Two, three, five" || len(msg.Content) != 1 || msg.Content[0].Type != "text" {
		t.Fatalf("message = %+v", msg)
	}

	loadScenario(t, scenario(textAnswer("Hello world")))
	stream := run(t, agent, "Hi")
	var text strings.Builder
	for s := range stream.Text() {
		text.WriteString(s)
	}
	if err := stream.Err(); err != nil || text.String() != "Hello world" {
		t.Fatalf("Text gave %q, Err %v", text.String(), err)
	}
	// Text closed the stream; what the turn ended with is still there.
	if msg, err := stream.FinalMessage(); err != nil || msg.Text() != "Hello world" {
		t.Errorf("FinalMessage after Text = %+v, %v", msg, err)
	}

	// A failed turn: its error.
	loadScenario(t, scenario(providerError(401, "authentication_error", "bad key")))
	if _, err := agent.Complete(context.Background(), "Again"); !errors.Is(err, panto.ErrAuthentication) {
		t.Fatalf("Complete of a refused turn: %v", err)
	}
}

// The library decides OpenAI's strict mode: true for Capital (every field required), false
// for a struct with a pointer field, and what the caller says when told.
func TestParseStrictIsTheLibrarysRule(t *testing.T) {
	loadScenario(t, scenario(
		textAnswer(`{"city":"Lima","country":"Peru","sights":[]}`),
		textAnswer(`{"city":"Lima"}`),
		textAnswer(`{"city":"Rome","country":"Italy","sights":[]}`)))
	agent := newAgent(t, testConfig("openai"))
	if _, err := panto.Parse[Capital](context.Background(), agent, "?"); err != nil {
		t.Fatal(err)
	}
	if l, err := panto.Parse[loose](context.Background(), agent, "?"); err != nil || l.City != "Lima" {
		t.Fatalf("Parse[loose] = %+v, %v", l, err)
	}
	format, _ := panto.ResponseFormatOf[Capital]()
	no := false
	format.Strict = &no
	if _, err := panto.Parse[Capital](context.Background(), agent, "?", panto.WithOptions(panto.TurnOptions{Params: panto.Params{ResponseFormat: &format}})); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false, false} {
		js := requestBody(t, i)["response_format"].(map[string]any)["json_schema"].(map[string]any)
		if js["strict"] != want {
			t.Errorf("request %d: strict = %v, want %v", i, js["strict"], want)
		}
	}
}

func TestFinalJSONWithoutAFormatIsAStateError(t *testing.T) {
	loadScenario(t, scenario(textAnswer(`{"a":1}`)))
	_, err := run(t, newAgent(t, testConfig("anthropic")), "Hi").FinalJSON()
	var perr *panto.Error
	if !errors.As(err, &perr) || perr.Code != panto.ErrState {
		t.Fatalf("FinalJSON of a turn without a response format: %v", err)
	}
}

func TestParse(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			loadScenario(t, scenario(textAnswer(`{"city":"Lima","country":"Peru","sights":[{"name":"Huaca"}]}`)))
			agent := newAgent(t, testConfig(p.name))
			c, err := panto.Parse[Capital](context.Background(), agent, "The capital of Peru?")
			if err != nil {
				t.Fatal(err)
			}
			if c.City != "Lima" || c.Country != "Peru" || len(c.Sights) != 1 || c.Sights[0].Name != "Huaca" {
				t.Fatalf("parsed %+v", c)
			}
			// The request carries the schema derived from Capital, in the provider's form.
			format, _ := panto.ResponseFormatOf[Capital]()
			body := requestBody(t, 0)
			var sent any
			switch p.name {
			case "anthropic": // output_config.format
				sent = body["output_config"].(map[string]any)["format"].(map[string]any)["schema"]
			case "openai": // response_format.json_schema
				js := body["response_format"].(map[string]any)["json_schema"].(map[string]any)
				sent = js["schema"]
				if js["name"] != "capital" || js["strict"] != true {
					t.Errorf("json_schema = %v", js)
				}
			}
			jsonEqual(t, []byte(mustJSON(t, sent)), string(format.Schema))

			// Not of the schema: ErrOutput with the text.
			loadScenario(t, scenario(textAnswer(`{"city":"Lima"}`)))
			_, err = panto.Parse[Capital](context.Background(), agent, "Again")
			var perr *panto.Error
			if !errors.As(err, &perr) || !errors.Is(err, panto.ErrOutput) || perr.Output != `{"city":"Lima"}` {
				t.Fatalf("an answer missing keys: %v", err)
			}
			// Not JSON.
			loadScenario(t, scenario(textAnswer("Lima, I think")))
			_, err = panto.Parse[Capital](context.Background(), agent, "Again")
			if !errors.As(err, &perr) || perr.Code != panto.ErrOutput || perr.Output != "Lima, I think" {
				t.Fatalf("an answer that is not JSON: %v", err)
			}
		})
	}
}

func TestErrorDetail(t *testing.T) {
	limited := providerError(429, "rate_limit_error", "Slow down")
	limited["headers"] = map[string]any{"retry-after": "7", "request-id": "req_42", "x-unrelated": "no"}
	loadScenario(t, scenario(limited))
	cfg := testConfig("anthropic")
	cfg.Retry = &panto.RetryPolicy{MaxRetries: panto.NoRetries}
	stream := run(t, newAgent(t, cfg), "Hi")
	nextAll(stream)
	perr := asPantoError(t, stream.Err(), panto.ErrRateLimit)
	if perr.RetryAfter == nil || *perr.RetryAfter != 7*time.Second {
		t.Errorf("RetryAfter = %v, want 7s", perr.RetryAfter)
	}
	if perr.Headers["retry-after"] != "7" || perr.Headers["request-id"] != "req_42" || perr.Headers["x-unrelated"] != "" {
		t.Errorf("Headers = %v", perr.Headers)
	}

	loadScenario(t, scenario(providerError(400, "invalid_request_error", "no")))
	stream = run(t, newAgent(t, cfg), "Hi")
	nextAll(stream)
	if perr := asPantoError(t, stream.Err(), panto.ErrInvalidRequest); perr.RetryAfter != nil {
		t.Errorf("RetryAfter = %v without a header", *perr.RetryAfter)
	}
}

func TestRequestIDs(t *testing.T) {
	answer := textAnswer("Hi")
	answer["headers"] = map[string]any{"request-id": "req_1"}
	loadScenario(t, scenario(answer))
	stream := run(t, newAgent(t, testConfig("anthropic")), "Hi")
	events := nextAll(stream)
	if start := ofKind(events, panto.EventMessageStart); len(start) != 1 || start[0].RequestID != "req_1" {
		t.Fatalf("MessageStart = %+v", start)
	}
	if ids := stream.RequestIDs(); len(ids) != 1 || ids[0] != "req_1" {
		t.Fatalf("RequestIDs = %v", ids)
	}
}

func TestRunOptions(t *testing.T) {
	loadScenario(t, scenario(textAnswer("A"), textAnswer("B")))
	cfg := testConfig("openai")
	cfg.System = "agent system"
	agent := newAgent(t, cfg)
	stream, err := agent.Run(context.Background(), "Hi", panto.WithOptions(panto.TurnOptions{
		Params: panto.Params{Temperature: panto.Ptr(0.25)}, MaxTokens: 77, System: panto.Ptr("turn system")}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.FinalMessage(); err != nil {
		t.Fatal(err)
	}
	stream.Close()
	first := requestBody(t, 0)
	if first["temperature"] != 0.25 || !strings.Contains(mustJSON(t, first), "turn system") {
		t.Errorf("the turn's request: %s", mustJSON(t, first))
	}
	// The next turn has the agent's configuration again.
	if _, err := agent.Complete(context.Background(), "Again"); err != nil {
		t.Fatal(err)
	}
	second := requestBody(t, 1)
	if _, set := second["temperature"]; set || !strings.Contains(mustJSON(t, second), "agent system") {
		t.Errorf("the next turn's request: %s", mustJSON(t, second))
	}

	// Options the library refuses fail Run with ErrConfig, and nothing is appended.
	before, _ := agent.MessageCount()
	_, err = agent.Run(context.Background(), "Hi", panto.WithOptionsJSON([]byte(`{"top_k":3}`)))
	if !errors.Is(err, panto.ErrConfig) || !strings.Contains(err.Error(), "top_k") {
		t.Fatalf("top_k for openai: %v", err)
	}
	if after, _ := agent.MessageCount(); after != before {
		t.Errorf("%d messages after a refused Run, want %d", after, before)
	}
}

func TestFinalJSONAfterTheStreamWasRead(t *testing.T) {
	loadScenario(t, scenario(textAnswer(`{"ok":true}`)))
	cfg := testConfig("openai")
	cfg.ResponseFormat = &panto.ResponseFormat{Type: "json_object"}
	stream := run(t, newAgent(t, cfg), "JSON please")
	var text strings.Builder
	for s := range stream.Text() { // reads the turn, then closes the stream
		text.WriteString(s)
	}
	got, err := stream.FinalJSON()
	if err != nil || string(got) != `{"ok":true}` || text.String() != string(got) {
		t.Fatalf("FinalJSON after Text = %s, %v (text %q)", got, err, text.String())
	}
}

func TestCacheBreakpointAndUnset(t *testing.T) {
	loadScenario(t, scenario(textAnswer("A")))
	cfg := testConfig("anthropic")
	cfg.TopK = 5
	agent := newAgent(t, cfg)
	if _, err := agent.Complete(context.Background(), "Remember this", panto.WithOptions(panto.TurnOptions{CacheBreakpoint: true})); err != nil {
		t.Fatal(err)
	}
	doc, err := agent.Export()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), `"cache":true`) {
		t.Errorf("the marked user message is not kept marked: %s", doc)
	}
	// top_k is Anthropic's: switching to OpenAI needs it unset in the same change.
	err = agent.SetConfig(panto.ConfigPatch{Provider: "openai"})
	if !errors.Is(err, panto.ErrConfig) || !strings.Contains(err.Error(), "top_k") {
		t.Fatalf("a switch to openai with top_k set: %v", err)
	}
	if err := agent.SetConfig(panto.ConfigPatch{Provider: "openai", Unset: []string{"top_k"}}); err != nil {
		t.Fatal(err)
	}
}
