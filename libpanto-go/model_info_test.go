package panto_test

import (
	"encoding/json"
	"testing"

	"panto.dev/panto"
)

// ModelInfo is written as the config's "model_info", only the fields set.
func TestModelInfoJSON(t *testing.T) {
	cfg := panto.Config{Provider: "anthropic", Model: "my-proxy-model", ModelInfo: &panto.ModelInfo{
		MaxOutputTokens: 1024,
		Price:           &panto.ModelPrice{Input: panto.Ptr(2.0), Output: panto.Ptr(10.0)},
		LongContext:     &panto.LongContextPrice{Above: 200000, Input: panto.Ptr(4.0)},
		Abilities:       &panto.ModelAbilities{Images: panto.Ptr(false)},
	}}
	js, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		ModelInfo json.RawMessage `json:"model_info"`
	}
	if err := json.Unmarshal(js, &got); err != nil {
		t.Fatal(err)
	}
	want := `{"max_output_tokens":1024,"price":{"input":2,"output":10},"long_context":{"above":200000,"input":4},"abilities":{"images":false}}`
	if string(got.ModelInfo) != want {
		t.Fatalf("model_info = %s, want %s", got.ModelInfo, want)
	}
}

// The core checks it: a negative price is refused, a model the catalog lacks is priced.
func TestModelInfoAccepted(t *testing.T) {
	agent, err := panto.NewAgent(panto.Config{Provider: "anthropic", Model: "my-proxy-model", APIKey: "k",
		BaseURL: "http://127.0.0.1:9", ModelInfo: &panto.ModelInfo{Price: &panto.ModelPrice{Input: panto.Ptr(-1.0)}}})
	if err == nil {
		agent.Close()
		t.Fatal("a negative price was taken")
	}
	agent, err = panto.NewAgent(panto.Config{Provider: "anthropic", Model: "my-proxy-model", APIKey: "k",
		BaseURL: "http://127.0.0.1:9", ModelInfo: &panto.ModelInfo{Price: &panto.ModelPrice{Input: panto.Ptr(1.0)}}})
	if err != nil {
		t.Fatal(err)
	}
	agent.Close()
}
