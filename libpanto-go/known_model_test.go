package panto_test

// Tests of LookupModel and Agent.ModelInfo (panto_model_info, panto_agent_model_info): what
// the catalog says of a model, and the agent's model with its Config.ModelInfo over it.

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"panto.dev/panto"
)

func TestLookupModelListedDatedAndUnknown(t *testing.T) {
	m := panto.LookupModel("anthropic", "claude-sonnet-4-5")
	if m == nil {
		t.Fatal("claude-sonnet-4-5 is not known")
	}
	if m.Name != "claude-sonnet-4-5" || !strings.HasPrefix(m.Catalog, "litellm ") || m.MaxInputTokens < 200000 || m.MaxOutputTokens <= 0 {
		t.Fatalf("LookupModel = %+v", m)
	}
	if m.Price == nil || m.Price.Input == nil || m.Price.Output == nil || *m.Price.Output <= *m.Price.Input {
		t.Fatalf("prices = %+v", m.Price)
	}
	if m.Abilities == nil || !*m.Abilities.Tools || !*m.Abilities.Images || !*m.Abilities.Thinking {
		t.Fatalf("abilities = %+v", m.Abilities)
	}
	if dated := panto.LookupModel("anthropic", "claude-sonnet-4-5-20990101"); !reflect.DeepEqual(dated, m) {
		t.Fatalf("the dated name gives %+v, want the alias's %+v", dated, m)
	}
	for _, unknown := range [][2]string{{"anthropic", "claude-sonnet-4-5-turbo"}, {"openai", ""}, {"no-such-provider", "gpt-4o"}} {
		if got := panto.LookupModel(unknown[0], unknown[1]); got != nil {
			t.Fatalf("LookupModel(%q, %q) = %+v, want nil", unknown[0], unknown[1], got)
		}
	}
	if gpt := panto.LookupModel("openai", "gpt-4o"); gpt == nil || gpt.Price.CacheWrite5m != nil {
		t.Fatalf("gpt-4o = %+v: a price the catalog lacks must be nil", gpt)
	}
}

func TestAgentModelInfoWithTheConfigsOverTheCatalog(t *testing.T) {
	agent, err := panto.NewAgent(panto.Config{Provider: "openai", Model: "mine", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	if m, err := agent.ModelInfo(); err != nil || m != nil {
		t.Fatalf("ModelInfo() = %+v, %v; want nil for an unknown model", m, err)
	}
	listed := panto.LookupModel("openai", "gpt-4o")
	// What the catalog says of gpt-4o, given as the override of a model it does not list.
	if err := agent.SetConfig(panto.ConfigPatch{ModelInfo: &listed.ModelInfo}); err != nil {
		t.Fatal(err)
	}
	m, err := agent.ModelInfo()
	if err != nil || m == nil {
		t.Fatalf("ModelInfo() = %+v, %v", m, err)
	}
	if m.Name != "mine" || m.Catalog != "" || !reflect.DeepEqual(m.ModelInfo, listed.ModelInfo) {
		t.Fatalf("ModelInfo() = %+v, want gpt-4o's figures under the name mine", m)
	}
	agent.Close()
	if _, err := agent.ModelInfo(); !errors.Is(err, panto.ErrClosed) {
		t.Fatalf("after Close: %v, want ErrClosed", err)
	}
}
