package panto_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
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

// mcpTestConfig: stdio servers (tests/mcp/server.py) and a provider at a closed port, so a turn
// starts the servers (before its request) and then fails to connect.
func mcpTestConfig(t *testing.T, servers ...string) panto.Config {
	script, err := filepath.Abs("../tests/mcp/server.py")
	if err != nil {
		t.Fatal(err)
	}
	cfg := panto.Config{Provider: "anthropic", Model: "m", APIKey: "k", BaseURL: "http://127.0.0.1:9",
		Retry: &panto.RetryPolicy{MaxRetries: panto.NoRetries}, MCPServers: map[string]panto.MCPServer{}}
	for _, name := range servers {
		cfg.MCPServers[name] = panto.MCPServer{Command: "python3", Args: []string{script}, Tools: []string{"echo", "add"}}
	}
	return cfg
}

func startServers(t *testing.T, agent *panto.Agent) {
	t.Helper()
	stream, err := agent.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	for stream.Next() {
	}
	if !errors.Is(stream.Err(), panto.ErrConnection) {
		t.Fatalf("the turn: %v", stream.Err())
	}
}

func TestMCPStatus(t *testing.T) {
	agent, err := panto.NewAgent(mcpTestConfig(t, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	status, err := agent.MCPStatus()
	if err != nil || len(status) != 1 || status[0].State != panto.MCPNotStarted || status[0].Transport != "stdio" {
		t.Fatalf("before: %+v %v", status, err)
	}
	startServers(t, agent)
	status, err = agent.MCPStatus()
	want := panto.MCPServerStatus{Name: "t", Transport: "stdio", State: panto.MCPReady, ProtocolVersion: "2025-11-25",
		ServerName: "panto-test-server", ServerVersion: "1.0.0", ToolCount: 2}
	if err != nil || len(status) != 1 || status[0] != want {
		t.Fatalf("after: %+v %v", status, err)
	}
	agent.Close()
	if _, err := agent.MCPStatus(); !errors.Is(err, panto.ErrClosed) {
		t.Fatalf("closed: %v", err)
	}
}

// children: the pids whose parent is this process (a zombie too: one not reaped is a leak).
func children(t *testing.T) []string {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	me := strconv.Itoa(os.Getpid())
	var found []string
	for _, e := range entries {
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		if len(fields) > 1 && fields[1] == me {
			found = append(found, e.Name())
		}
	}
	return found
}

func fdCount(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

func TestMCPAgentsMadeAndFreedLeakNoDescriptorNorProcess(t *testing.T) {
	once := func() {
		agent, err := panto.NewAgent(mcpTestConfig(t, "a", "b"))
		if err != nil {
			t.Fatal(err)
		}
		startServers(t, agent)
		if n := len(children(t)); n < 2 {
			t.Fatalf("%d children while the servers run", n)
		}
		agent.Close()
	}
	once() // the library's own descriptors (its watchdog) made once, before counting
	before := fdCount(t)
	kids := strings.Join(children(t), " ") // (the tests' emulator is one)
	for i := 0; i < 10; i++ {
		once()
	}
	if after := fdCount(t); after != before {
		t.Fatalf("descriptors: %d before, %d after", before, after)
	}
	if left := strings.Join(children(t), " "); left != kids {
		t.Fatalf("children: %q before, %q after", kids, left)
	}
}
