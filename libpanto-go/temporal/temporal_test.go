package temporal_test

// The Go side of make test-durable: a real temporal dev server (build/temporal-cli) and the
// emulator, a worker in this process.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"panto.dev/panto"
	ptemporal "panto.dev/panto/temporal"
)

var (
	emulatorURL string
	address     string
)

func TestMain(m *testing.M) {
	if queue := os.Getenv("PANTO_TEMPORAL_WORKER"); queue != "" {
		workerProcess(queue) // TestAKilledWorkerLosesOnlyTheActivityInFlight's workers
		return
	}
	os.Setenv("ANTHROPIC_API_KEY", "durable-test-key") // the workers' key: never in the history
	stop, err := start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "panto/temporal tests:", err)
		os.Exit(1)
	}
	code := m.Run()
	stop()
	os.Exit(code)
}

// start starts the emulator and a temporal dev server on loopback.
func start() (func(), error) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		return nil, err
	}
	emu := exec.Command(filepath.Join(repo, ".venv", "bin", "python"), "-m", "panto.emulator", "--port", "0")
	emu.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(repo, "bindings-py"))
	out, err := emu.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := emu.Start(); err != nil {
		return nil, err
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	emulatorURL = strings.TrimSpace(strings.TrimPrefix(line, "panto-emulator listening on "))
	go func() { _, _ = io.Copy(io.Discard, out) }()

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	server := exec.Command(filepath.Join(repo, "build", "temporal-cli", "temporal"), "server", "start-dev",
		"--ip", "127.0.0.1", "--port", fmt.Sprint(port), "--headless", "--log-level", "warn")
	if err := server.Start(); err != nil {
		emu.Process.Kill()
		return nil, fmt.Errorf("the temporal CLI (make setup builds it): %w", err)
	}
	address = fmt.Sprintf("127.0.0.1:%d", port)
	stop := func() {
		_ = server.Process.Kill()
		_ = server.Wait()
		_ = emu.Process.Kill()
		_ = emu.Wait()
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if c, err := net.Dial("tcp", address); err == nil {
			c.Close()
			return stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return nil, errors.New("the temporal dev server did not start")
		}
	}
}

func load(t *testing.T, scenario any) { loadAt(t, emulatorURL, scenario) }

func loadAt(t *testing.T, url string, scenario any) {
	t.Helper()
	body, _ := json.Marshal(scenario)
	resp, err := http.Post(url+"/_emulator/scenario", "application/json", bytes.NewReader(body))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("loading the scenario: %v %v", err, resp)
	}
	resp.Body.Close()
}

func modelRequests(t *testing.T) int { return len(requestBodies(t)) }

// requestBodies are the bodies of the requests the emulator got since the last load, as
// distinct texts: a body sent twice is there once.
func requestBodies(t *testing.T) map[string]bool {
	resp, err := http.Get(emulatorURL + "/_emulator/requests")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var reqs []struct{ Body json.RawMessage }
	if err := json.NewDecoder(resp.Body).Decode(&reqs); err != nil {
		t.Fatal(err)
	}
	bodies := map[string]bool{}
	for _, r := range reqs {
		bodies[string(r.Body)] = true
	}
	if len(bodies) != len(reqs) {
		t.Fatalf("%d requests, %d distinct: a request was sent twice", len(reqs), len(bodies))
	}
	return bodies
}

func tools() []panto.Tool {
	schema := json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"}},"required":["key"]}`)
	handler := func(name, prefix string) func(context.Context, json.RawMessage) (string, error) {
		return func(_ context.Context, input json.RawMessage) (string, error) {
			var in struct{ Key string }
			if err := json.Unmarshal(input, &in); err != nil {
				return "", err
			}
			if runs := os.Getenv("DURABLE_RUNS"); runs != "" { // count runs, across processes
				f, err := os.OpenFile(filepath.Join(runs, name+".runs"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
				if err != nil {
					return "", err
				}
				fmt.Fprintln(f, os.Getpid())
				f.Close()
				block := filepath.Join(runs, name+".block")
				if _, err := os.Stat(block); err == nil {
					_ = os.WriteFile(filepath.Join(runs, name+".started"), nil, 0o644)
					for ; err == nil; _, err = os.Stat(block) {
						time.Sleep(50 * time.Millisecond)
					}
				}
			}
			return prefix + in.Key, nil
		}
	}
	return []panto.Tool{
		{Name: "lookup", Description: "The value stored under a key.", InputSchema: schema, Handler: handler("lookup", "value of ")},
		{Name: "slow", Description: "The value stored under a key, from slow storage.", InputSchema: schema, Handler: handler("slow", "slow value of ")},
	}
}

func config(t *testing.T) json.RawMessage { return configAt(t, emulatorURL) }

func configAt(t *testing.T, url string) json.RawMessage {
	var specs []map[string]any
	for _, tool := range tools() {
		specs = append(specs, map[string]any{"name": tool.Name, "description": tool.Description, "input_schema": tool.InputSchema})
	}
	cfg, err := json.Marshal(map[string]any{"provider": "anthropic", "model": "claude-test", "base_url": url, "tools": specs})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

var twoRounds = twoRoundsOf("")

// twoRoundsOf is a turn with two tool rounds (lookup, then slow, then the answer), its ids
// and keys ending with n.
func twoRoundsOf(n string) map[string]any {
	return map[string]any{"responses": []any{
		map[string]any{"message": map[string]any{"content": []any{
			map[string]any{"type": "text", "text": "Looking up a" + n + "."},
			map[string]any{"type": "tool_use", "id": "toolu_a" + n, "name": "lookup", "input": map[string]any{"key": "a" + n}}}}},
		map[string]any{"message": map[string]any{"content": []any{
			map[string]any{"type": "tool_use", "id": "toolu_b" + n, "name": "slow", "input": map[string]any{"key": "b" + n}}}}},
		map[string]any{"message": map[string]any{"content": []any{map[string]any{"type": "text", "text": "Both of " + n + " are known."}}}},
	}}
}

func startWorker(t *testing.T, queue string, sinks map[string]ptemporal.Sink) client.Client {
	c, err := client.Dial(client.Options{HostPort: address})
	if err != nil {
		t.Fatal(err)
	}
	w := worker.New(c, queue, worker.Options{MaxHeartbeatThrottleInterval: time.Second, DefaultHeartbeatThrottleInterval: time.Second})
	ptemporal.Register(w, tools(), sinks)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Stop(); c.Close() })
	return c
}

// sameJSON: the two values are the same JSON (key order aside).
func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	var x, y any
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if json.Unmarshal(ja, &x) != nil || json.Unmarshal(jb, &y) != nil {
		t.Fatal("not JSON")
	}
	return reflect.DeepEqual(x, y)
}

func TestTwoToolRoundsOnAWorker(t *testing.T) {
	load(t, twoRounds)
	queue := "go-two-" + fmt.Sprint(time.Now().UnixNano())
	var kinds []string
	var mu sync.Mutex
	c := startWorker(t, queue, map[string]ptemporal.Sink{"log": func(_ context.Context, _ string, ev panto.Event) error {
		mu.Lock()
		defer mu.Unlock()
		kinds = append(kinds, ev.Kind.String())
		return nil
	}})
	turn, err := ptemporal.NewTurn(config(t), "What are a and b?")
	if err != nil {
		t.Fatal(err)
	}
	sink := "log"
	turn.Sink = &sink
	ctx := context.Background()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: queue}, ptemporal.WorkflowName, turn)
	if err != nil {
		t.Fatal(err)
	}
	var result ptemporal.Result
	if err := run.Get(ctx, &result); err != nil {
		t.Fatal(err)
	}
	if result.StopReason != "end_turn" || modelRequests(t) != 3 {
		t.Fatalf("stop reason %q, %d requests", result.StopReason, modelRequests(t))
	}

	if local := localTurn(t, emulatorURL, twoRounds, "What are a and b?"); !sameJSON(t, result.Conversation, local) {
		t.Fatalf("durable:\n%s\nlocal:\n%s", mustJSON(result.Conversation), mustJSON(local))
	}
	mu.Lock()
	defer mu.Unlock()
	if kinds[0] != "message_start" || kinds[len(kinds)-1] != "message_complete" {
		t.Fatalf("the sink got %v", kinds)
	}
}

func TestACanceledWorkflowLeavesAValidConversation(t *testing.T) {
	var words []string
	for i := 1; i <= 30; i++ {
		words = append(words, fmt.Sprint(i))
	}
	count := strings.Join(words, " ")
	load(t, map[string]any{"responses": []any{map[string]any{"chunk_delay_ms": 300,
		"message": map[string]any{"content": []any{map[string]any{"type": "text", "text": count}}}}}})
	queue := "go-cancel-" + fmt.Sprint(time.Now().UnixNano())
	delta := make(chan struct{}, 1)
	c := startWorker(t, queue, map[string]ptemporal.Sink{"log": func(_ context.Context, _ string, ev panto.Event) error {
		if ev.Kind == panto.EventContentDelta {
			select {
			case delta <- struct{}{}:
			default:
			}
		}
		return nil
	}})
	turn, _ := ptemporal.NewTurn(config(t), "Count to thirty")
	sink := "log"
	turn.Sink = &sink
	ctx := context.Background()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: queue}, ptemporal.WorkflowName, turn)
	if err != nil {
		t.Fatal(err)
	}
	<-delta
	if err := c.CancelWorkflow(ctx, run.GetID(), run.GetRunID()); err != nil {
		t.Fatal(err)
	}
	var canceled *temporal.CanceledError
	if err := run.Get(ctx, nil); !errors.As(err, &canceled) {
		t.Fatalf("the workflow ended with %v, want canceled", err)
	}
	value, err := c.QueryWorkflow(ctx, run.GetID(), run.GetRunID(), ptemporal.QueryName)
	if err != nil {
		t.Fatal(err)
	}
	var conv ptemporal.Conversation
	if err := value.Get(&conv); err != nil {
		t.Fatal(err)
	}
	var answer struct {
		StopReason string `json:"stop_reason"`
		Content    []struct{ Text string }
	}
	if len(conv.Messages) != 2 || json.Unmarshal(conv.Messages[1], &answer) != nil || answer.StopReason != "aborted" {
		t.Fatalf("the conversation left: %s", mustJSON(conv))
	}
	if said := answer.Content[0].Text; said == "" || said == count || !strings.HasPrefix(count, said) {
		t.Fatalf("said %q", said)
	}
	agent, err := panto.NewAgent(panto.Config{Provider: "anthropic", Model: "claude-test", BaseURL: emulatorURL})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	if err := agent.Import([]byte(mustJSON(conv))); err != nil {
		t.Fatalf("the conversation left does not import: %v", err)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// workerProcess is a worker in a process of its own: it prints "ready" once it polls, and
// runs until it is killed.
func workerProcess(queue string) {
	c, err := client.Dial(client.Options{HostPort: os.Getenv("PANTO_TEMPORAL_ADDRESS")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w := worker.New(c, queue, worker.Options{MaxHeartbeatThrottleInterval: time.Second})
	ptemporal.Register(w, tools(), nil)
	if err := w.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("ready")
	select {}
}

func startWorkerProcess(t *testing.T, queue, runs string) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "PANTO_TEMPORAL_WORKER="+queue, "PANTO_TEMPORAL_ADDRESS="+address, "DURABLE_RUNS="+runs)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	r := bufio.NewReader(out) // the SDK logs on stdout too
	for {
		line, err := r.ReadString('\n')
		if line == "ready\n" {
			break
		}
		if err != nil {
			t.Fatalf("the worker did not start: %v", err)
		}
	}
	go func() { _, _ = io.Copy(io.Discard, r) }()
	return cmd
}

func runsOf(t *testing.T, runs, tool string) int {
	b, err := os.ReadFile(filepath.Join(runs, tool+".runs"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return len(strings.Fields(string(b)))
}

func TestAKilledWorkerLosesOnlyTheActivityInFlight(t *testing.T) {
	load(t, twoRounds)
	runs := t.TempDir()
	block := filepath.Join(runs, "slow.block")
	if err := os.WriteFile(block, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	queue := "go-kill-" + fmt.Sprint(time.Now().UnixNano())
	first := startWorkerProcess(t, queue, runs)
	c, err := client.Dial(client.Options{HostPort: address})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	turn, _ := ptemporal.NewTurn(config(t), "What are a and b?")
	turn.ToolCall.HeartbeatSeconds = 2
	ctx := context.Background()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: queue}, ptemporal.WorkflowName, turn)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(runs, "slow.started")); err == nil {
			break // the second round's tool runs
		}
		if time.Now().After(deadline) {
			t.Fatal("the second round's tool did not start")
		}
	}
	_ = first.Process.Kill() // SIGKILL
	_ = first.Wait()
	if err := os.Remove(block); err != nil {
		t.Fatal(err)
	}
	startWorkerProcess(t, queue, runs)
	var result ptemporal.Result
	if err := run.Get(ctx, &result); err != nil {
		t.Fatal(err)
	}
	if n := len(requestBodies(t)); n != 3 {
		t.Fatalf("%d model requests, want 3", n)
	}
	if l, s := runsOf(t, runs, "lookup"), runsOf(t, runs, "slow"); l != 1 || s != 2 {
		t.Fatalf("lookup ran %d times (want 1), slow %d (want 2: killed, then again)", l, s)
	}
	if result.StopReason != "end_turn" || len(result.Conversation.Messages) != 6 {
		t.Fatalf("the turn ended %q with %d messages", result.StopReason, len(result.Conversation.Messages))
	}
}

// localTurn runs the turn locally (the agent running its tools), the scenario loaded anew.
func localTurn(t *testing.T, url string, scenario any, input string) ptemporal.Conversation {
	t.Helper()
	loadAt(t, url, scenario)
	agent, err := panto.NewAgent(panto.Config{Provider: "anthropic", Model: "claude-test", BaseURL: url, Tools: tools()})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	stream, err := agent.Run(context.Background(), input)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.FinalMessage(); err != nil {
		t.Fatal(err)
	}
	stream.Close()
	return exported(t, agent)
}

// exported is the agent's conversation.
func exported(t *testing.T, agent *panto.Agent) ptemporal.Conversation {
	t.Helper()
	doc, err := agent.Export()
	if err != nil {
		t.Fatal(err)
	}
	var conv ptemporal.Conversation
	if err := json.Unmarshal(doc, &conv); err != nil {
		t.Fatal(err)
	}
	return conv
}

func Test100WorkflowsOverTwoWorkers(t *testing.T) {
	const n = 100
	repo, _ := filepath.Abs("../..")
	emus := exec.Command(filepath.Join(repo, ".venv", "bin", "python"), filepath.Join(repo, "tests", "durable", "emulators.py"), fmt.Sprint(n))
	emus.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(repo, "bindings-py"))
	stdin, _ := emus.StdinPipe()
	out, _ := emus.StdoutPipe()
	if err := emus.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = emus.Wait() }()
	r := bufio.NewReader(out)
	urls := make([]string, n)
	for i := range urls {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("the emulators did not start: %v", err)
		}
		urls[i] = strings.TrimSpace(line)
		loadAt(t, urls[i], twoRoundsOf(fmt.Sprint(i)))
	}
	runs := t.TempDir()
	queue := "go-many-" + fmt.Sprint(time.Now().UnixNano())
	startWorkerProcess(t, queue, runs)
	startWorkerProcess(t, queue, runs)
	c, err := client.Dial(client.Options{HostPort: address})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	results := make([]ptemporal.Result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			turn, _ := ptemporal.NewTurn(configAt(t, urls[i]), fmt.Sprintf("What are a%d and b%d?", i, i))
			run, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{TaskQueue: queue}, ptemporal.WorkflowName, turn)
			if err == nil {
				err = run.Get(context.Background(), &results[i])
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("workflow %d: %v", i, errs[i])
		}
		local := localTurn(t, urls[i], twoRoundsOf(fmt.Sprint(i)), fmt.Sprintf("What are a%d and b%d?", i, i))
		if !sameJSON(t, results[i].Conversation, local) {
			t.Fatalf("workflow %d:\n%s\nlocal:\n%s", i, mustJSON(results[i].Conversation), mustJSON(local))
		}
	}
	b, _ := os.ReadFile(filepath.Join(runs, "lookup.runs"))
	pids := map[string]bool{}
	for _, p := range strings.Fields(string(b)) {
		pids[p] = true
	}
	if len(pids) != 2 || len(strings.Fields(string(b))) != n {
		t.Fatalf("lookup ran %d times in %d processes, want %d in 2", len(strings.Fields(string(b))), len(pids), n)
	}
}
