package panto_test

// Agent.CountTokens against the provider emulator (its made-up count: a token per word of the
// request's strings, one per object; bindings-py/panto/emulator/count.py).

import (
	"context"
	"errors"
	"testing"

	"panto.dev/panto"
)

func TestCountTokensAsksTheProviderAndAppendsNothing(t *testing.T) {
	loadScenario(t, repeatedText())
	agent := newAgent(t, noCacheConfig("anthropic"))
	// {model, messages: [{user, content: [{type, text}]}]}: 3 objects and 5 words.
	got, err := agent.CountTokens(context.Background(), panto.Text("How many tokens is this?"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (panto.TokenCount{InputTokens: 8}); got != want {
		t.Fatalf("CountTokens = %+v, want %+v", got, want)
	}
	if n, _ := agent.MessageCount(); n != 0 {
		t.Fatalf("%d messages after a count", n)
	}
	reqs := receivedRequests(t)
	if len(reqs) != 1 || reqs[0].Path != "/v1/messages/count_tokens" {
		t.Fatalf("requests: %+v", reqs)
	}
}

func TestCountTokensFailsTypedAndIsRefusedWhileBusy(t *testing.T) {
	loadScenario(t, repeatedText())
	noKey := testConfig("anthropic")
	noKey.APIKey = ""
	agent := newAgent(t, noKey)
	_, err := agent.CountTokens(context.Background())
	var perr *panto.Error
	if !errors.Is(err, panto.ErrAuthentication) || !errors.As(err, &perr) || perr.HTTPStatus != 401 {
		t.Fatalf("no key: %v", err)
	}
	agent = newAgent(t, testConfig("anthropic"))
	stream := run(t, agent, "Hi")
	if _, err := agent.CountTokens(context.Background(), panto.Text("hi")); !errors.Is(err, panto.ErrBusy) {
		t.Fatalf("during a turn: %v", err)
	}
	nextAll(stream)
	stream.Close()
}

func TestCountTokensOfOpenAIChatIsEstimated(t *testing.T) {
	agent := newAgent(t, panto.Config{Provider: "openai", Model: "gpt-4o", APIKey: "k"})
	got, err := agent.CountTokens(context.Background(), panto.Text("How many tokens is this?"))
	if want := (panto.TokenCount{InputTokens: 6, Estimated: true}); err != nil || got != want {
		t.Fatalf("CountTokens = %+v, %v; want %+v", got, err, want)
	}
}
