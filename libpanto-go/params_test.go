package panto_test

import (
	"encoding/json"
	"strings"
	"testing"

	"panto.dev/panto"
)

func TestParamsJSON(t *testing.T) {
	cfg := panto.Config{Provider: "openai", Model: "m", ThinkingBudget: 0,
		Params: panto.Params{
			Temperature: panto.Ptr(0.0), TopP: panto.Ptr(0.9), Stop: []string{"END"}, Seed: panto.Ptr[int64](7),
			Metadata: map[string]string{"k": "v"}, User: "u1", ParallelToolCalls: panto.Ptr(false),
			ToolChoice: panto.UseTool("get_weather"), ServiceTier: "flex", ReasoningEffort: "low",
			ResponseFormat: &panto.ResponseFormat{Type: "json_object"},
			Cache:          &panto.Cache{Key: "k1", Retention: "24h"},
			ExtraHeaders:   map[string]string{"x-trace": "1"}, ExtraBody: map[string]any{"logprobs": true},
		},
		ToolExecution: panto.ToolsSequential, Log: &panto.Log{Level: "debug"}}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// temperature 0 is sent: a pointer tells it from unset.
	jsonEqual(t, b, `{"provider":"openai","model":"m","temperature":0,"top_p":0.9,"stop":["END"],"seed":7,
		"metadata":{"k":"v"},"user":"u1","parallel_tool_calls":false,"tool_choice":{"name":"get_weather"},
		"service_tier":"flex","reasoning_effort":"low","response_format":{"type":"json_object"},
		"cache":{"key":"k1","retention":"24h"},"extra_headers":{"x-trace":"1"},"extra_body":{"logprobs":true},
		"tool_execution":"sequential","log":{"level":"debug"}}`)

	for choice, want := range map[*panto.ToolChoice]string{&panto.ToolChoiceAuto: `"auto"`,
		&panto.ToolChoiceNone: `"none"`, &panto.ToolChoiceRequired: `"required"`} {
		b, _ := json.Marshal(panto.Config{Params: panto.Params{ToolChoice: *choice}})
		jsonEqual(t, b, `{"tool_choice":`+want+`}`)
	}

	b, err = json.Marshal(panto.Config{Provider: "anthropic", Params: panto.Params{
		ServerTools: []panto.ServerTool{{"type": "web_search_20250305", "name": "web_search", "max_uses": 3}}}})
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, b, `{"provider":"anthropic","server_tools":[{"type":"web_search_20250305","name":"web_search","max_uses":3}]}`)

	b, err = json.Marshal(panto.Config{Provider: "anthropic", ThinkingBudget: 4096})
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, b, `{"provider":"anthropic","thinking":{"budget_tokens":4096}}`)
	if _, err := json.Marshal(panto.Config{Thinking: panto.ThinkingLow, ThinkingBudget: 2048}); err == nil {
		t.Error("Thinking and ThinkingBudget both: no error")
	}
}

func TestConfigPatchParams(t *testing.T) {
	b, err := json.Marshal(panto.ConfigPatch{Provider: "openai", Params: panto.Params{Seed: panto.Ptr[int64](1)},
		Unset: []string{"top_k", "cache"}, ToolExecution: panto.ToolsParallel})
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, b, `{"provider":"openai","seed":1,"top_k":null,"cache":null,"tool_execution":"parallel"}`)
	if _, err := json.Marshal(panto.ConfigPatch{Params: panto.Params{TopK: 5}, Unset: []string{"top_k"}}); err == nil {
		t.Error("a key both set and unset: no error")
	}
	b, _ = json.Marshal(panto.ConfigPatch{ThinkingBudget: 1024})
	jsonEqual(t, b, `{"thinking":{"budget_tokens":1024}}`)
}

func TestTurnOptionsJSON(t *testing.T) {
	b, err := json.Marshal(panto.TurnOptions{Params: panto.Params{TopK: 3}, MaxTokens: 64,
		System: panto.Ptr(""), CacheBreakpoint: true, Thinking: panto.ThinkingHigh})
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, b, `{"top_k":3,"max_tokens":64,"system":"","cache_breakpoint":true,"thinking":"high"}`)
	b, _ = json.Marshal(panto.TurnOptions{})
	jsonEqual(t, b, `{}`)
}

type Capital struct {
	City    string `json:"city" description:"The capital"`
	Country string `json:"country"`
	Sights  []struct {
		Name string `json:"name"`
	} `json:"sights"`
}

type loose struct {
	City string  `json:"city"`
	Note *string `json:"note"`
}

func TestResponseFormatOfType(t *testing.T) {
	f, err := panto.ResponseFormatOf[Capital]()
	if err != nil {
		t.Fatal(err)
	}
	if f.Type != "json_schema" || f.Name != "capital" || f.Strict != nil {
		t.Errorf("format = %+v, want json_schema named capital, strict left to the library", f)
	}
	// Every object is closed, as both providers' structured outputs ask.
	jsonEqual(t, f.Schema, `{"type":"object","properties":{
		"city":{"type":"string","description":"The capital"},"country":{"type":"string"},
		"sights":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"}},
			"required":["name"],"additionalProperties":false}}},
		"required":["city","country","sights"],"additionalProperties":false}`)

	f, err = panto.ResponseFormatOf[loose]()
	if err != nil || f.Strict != nil {
		t.Errorf("an optional field: format %+v, %v; want strict left to the library", f, err)
	}
	if _, err := panto.ResponseFormatOf[[]string](); err == nil || !strings.Contains(err.Error(), "a structured answer is a JSON object") {
		t.Errorf("a slice: err = %v", err)
	}
}
