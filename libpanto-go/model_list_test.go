package panto_test

// Agent.ListModels against the provider emulator (its lists: three models a provider, one the
// catalog lacks, Anthropic's in pages of two; bindings-py/panto/emulator/models.py).

import (
	"context"
	"errors"
	"testing"

	"panto.dev/panto"
)

func TestListModelsFollowsEveryPageAndJoinsTheCatalog(t *testing.T) {
	loadScenario(t, repeatedText())
	agent := newAgent(t, testConfig("anthropic"))
	listed, err := agent.ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != 3 || listed[0].ID != "claude-sonnet-4-5-20250929" || listed[2].ID != "claude-emulator-1" {
		t.Fatalf("ListModels = %+v", listed)
	}
	if listed[0].DisplayName != "Claude Sonnet 4.5" || listed[0].Created != "2025-09-29T00:00:00Z" {
		t.Fatalf("first: %+v", listed[0])
	}
	if listed[0].Info == nil || listed[0].Info.MaxInputTokens != 200000 || listed[2].Info != nil {
		t.Fatalf("catalog: %+v, %+v", listed[0].Info, listed[2].Info)
	}
	if reqs := receivedRequests(t); len(reqs) != 2 || reqs[1].Path != "/v1/models?limit=1000&after_id=claude-haiku-4-5-20251001" {
		t.Fatalf("requests: %+v", reqs)
	}
}

func TestListModelsFailsTyped(t *testing.T) {
	loadScenario(t, repeatedText())
	noKey := testConfig("anthropic")
	noKey.APIKey = ""
	_, err := newAgent(t, noKey).ListModels(context.Background())
	var perr *panto.Error
	if !errors.Is(err, panto.ErrAuthentication) || !errors.As(err, &perr) || perr.HTTPStatus != 401 {
		t.Fatalf("no key: %v", err)
	}
}
