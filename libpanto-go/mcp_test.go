package panto_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"panto.dev/panto"
)

// Config.MCPServers is the config key mcp_servers as it is: the library judges it.
func TestMCPServersPassThrough(t *testing.T) {
	cfg := panto.Config{Provider: "anthropic", Model: "m", APIKey: "k", MCPServers: map[string]panto.MCPServer{
		"files": {Command: "python3", Args: []string{"s.py"}, Env: map[string]string{"A": "1"}, Tools: []string{"echo"},
			Requires: []string{"fs.read"}, TimeoutMs: 5000},
	}}
	js, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := `"mcp_servers":{"files":{"command":"python3","args":["s.py"],"env":{"A":"1"},"tools":["echo"],"requires":["fs.read"],"timeout_ms":5000}}`
	if !strings.Contains(string(js), want) {
		t.Fatalf("got %s", js)
	}
	// A Streamable HTTP server: url and headers, no command.
	cfg.MCPServers = map[string]panto.MCPServer{"docs": {URL: "https://example.com/mcp", Headers: map[string]string{"Authorization": "Bearer t"}}}
	js, err = json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want = `"mcp_servers":{"docs":{"url":"https://example.com/mcp","headers":{"Authorization":"Bearer t"}}}`
	if !strings.Contains(string(js), want) {
		t.Fatalf("got %s", js)
	}
	agent, err := panto.NewAgent(cfg)
	if err != nil {
		t.Fatal(err)
	}
	agent.Close()
	cfg.MCPServers = map[string]panto.MCPServer{"a__b": {Command: "x"}}
	_, err = panto.NewAgent(cfg)
	var perr *panto.Error
	if !errors.Is(err, panto.ErrConfig) || !errors.As(err, &perr) || !strings.Contains(perr.Message, `"a__b" is not a server name`) {
		t.Fatalf("got %v", err)
	}
}
