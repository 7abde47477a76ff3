package panto_test

// Tests of Agent.Settings (panto_agent_settings): the settings an agent holds, never its key;
// after a provider switch, the address and model the switch gave.

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"panto.dev/panto"
)

func TestSettingsGivenAndDefaults(t *testing.T) {
	agent, err := panto.NewAgent(panto.Config{Provider: "anthropic", Model: "claude-test",
		BaseURL: "http://127.0.0.1:9", APIKey: "sk-secret", System: "Be brief.",
		Thinking: panto.ThinkingLow, Capabilities: []string{"fs.read"}})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	got, err := agent.Settings()
	if err != nil {
		t.Fatal(err)
	}
	system := "Be brief."
	want := panto.Settings{Provider: "anthropic", Model: "claude-test", BaseURL: "http://127.0.0.1:9",
		System: &system, MaxTokens: 4096, Thinking: panto.ThinkingLow, MaxToolIterations: 10,
		Capabilities: []string{"fs.read"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Settings() = %+v, want %+v", got, want)
	}
	js, err := agent.SettingsJSON()
	if err != nil || strings.Contains(string(js), "sk-secret") {
		t.Fatalf("SettingsJSON() = %s, %v: the key must not be there", js, err)
	}
}

func TestSettingsAfterAProviderSwitch(t *testing.T) {
	t.Setenv("ANTHROPIC_BASE_URL", "http://anthropic.test")
	t.Setenv("ANTHROPIC_API_KEY", "a-key")
	t.Setenv("OPENAI_BASE_URL", "http://openai.test/v1")
	t.Setenv("OPENAI_API_KEY", "o-key")
	agent, err := panto.NewAgent(panto.Config{Provider: "anthropic", Model: "claude-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	if err := agent.SetConfigJSON([]byte(`{"provider":"openai","model":"gpt-test"}`)); err != nil {
		t.Fatal(err)
	}
	got, err := agent.Settings()
	if err != nil {
		t.Fatal(err)
	}
	if got.Provider != "openai" || got.Model != "gpt-test" || got.BaseURL != "http://openai.test/v1" || got.System != nil {
		t.Fatalf("Settings() = %+v", got)
	}
	agent.Close()
	if _, err := agent.Settings(); !errors.Is(err, panto.ErrClosed) {
		t.Fatalf("Settings() of a closed agent: %v, want ErrClosed", err)
	}
}
