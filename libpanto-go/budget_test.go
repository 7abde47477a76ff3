package panto_test

// Tests of Budget (issue 36) as the Go API writes it: in Config, ConfigPatch and TurnOptions,
// read back in Settings. The turns that reach a budget run in the conformance cases budget_*.

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"panto.dev/panto"
)

func TestBudgetInConfigPatchAndTurnOptions(t *testing.T) {
	agent, err := panto.NewAgent(panto.Config{Provider: "anthropic", Model: "claude-test",
		BaseURL: "http://127.0.0.1:9", APIKey: "k",
		Budget: &panto.Budget{ToolRounds: panto.Ptr(0), WallMs: panto.Ptr(5000)}})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	settings := func() panto.Budget {
		s, err := agent.Settings()
		if err != nil {
			t.Fatal(err)
		}
		return s.Budget
	}
	if got, want := settings(), (panto.Budget{ToolRounds: panto.Ptr(0), WallMs: panto.Ptr(5000)}); !reflect.DeepEqual(got, want) {
		t.Fatalf("Settings().Budget = %+v, want %+v", got, want)
	}
	if err := agent.SetConfig(panto.ConfigPatch{Budget: &panto.Budget{OutputTokens: panto.Ptr(300)}}); err != nil {
		t.Fatal(err)
	}
	if got, want := settings(), (panto.Budget{OutputTokens: panto.Ptr(300), ToolRounds: panto.Ptr(0), WallMs: panto.Ptr(5000)}); !reflect.DeepEqual(got, want) {
		t.Fatalf("after SetConfig, Settings().Budget = %+v, want %+v", got, want)
	}
	err = agent.SetConfig(panto.ConfigPatch{Budget: &panto.Budget{ToolRounds: panto.Ptr(-1)}})
	if !errors.Is(err, panto.ErrConfig) {
		t.Fatalf("a negative tool_rounds: %v, want ErrConfig", err)
	}
	// A turn's budget is the turn's; one the library refuses is refused at Run.
	_, err = agent.Run(context.Background(), "hi", panto.WithOptions(panto.TurnOptions{
		Budget: &panto.Budget{WallMs: panto.Ptr(0)}}))
	if !errors.Is(err, panto.ErrConfig) {
		t.Fatalf("wall_ms 0 for a turn: %v, want ErrConfig", err)
	}
	stream, err := agent.Run(context.Background(), "hi", panto.WithOptions(panto.TurnOptions{
		Budget: &panto.Budget{ToolRounds: panto.Ptr(2)}}))
	if err != nil {
		t.Fatal(err)
	}
	stream.Close()
	if got := settings().ToolRounds; got == nil || *got != 0 {
		t.Fatalf("the agent's tool_rounds after a turn's own: %v, want 0", got)
	}
	if err := agent.SetConfig(panto.ConfigPatch{Budget: &panto.Budget{CostUSD: panto.Ptr(0.25)}}); err != nil {
		t.Fatal(err)
	}
	if got := settings().CostUSD; got == nil || *got != 0.25 {
		t.Fatalf("Settings().Budget.CostUSD = %v, want 0.25", got)
	}
	err = agent.SetConfig(panto.ConfigPatch{Budget: &panto.Budget{CostUSD: panto.Ptr(-1.0)}})
	if !errors.Is(err, panto.ErrConfig) {
		t.Fatalf("a negative cost_usd: %v, want ErrConfig", err)
	}
}

func TestBudgetKindOnlyWhenABudgetEndedTheTurn(t *testing.T) {
	ev := panto.Event{Kind: panto.EventMessageComplete, StopReason: panto.StopBudget, ProviderStopReason: "wall_ms"}
	if ev.BudgetKind() != panto.BudgetWall {
		t.Fatalf("BudgetKind() = %q", ev.BudgetKind())
	}
	ev.StopReason = panto.StopEndTurn
	if ev.BudgetKind() != "" {
		t.Fatalf("BudgetKind() of an end_turn = %q", ev.BudgetKind())
	}
	if panto.StopBudget.String() != "budget" {
		t.Fatalf("StopBudget.String() = %q", panto.StopBudget.String())
	}
}
