package temporal_test

// Approvals as signals, and workers of both languages on one task queue.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"panto.dev/panto"
	ptemporal "panto.dev/panto/temporal"
)

// asking is a round of two lookup calls (a tool that needs approval; with hostCall, a call of
// slow between them, which waits for nobody), then the answer.
func asking(hostCall bool) map[string]any {
	call := func(id, name string) any {
		return map[string]any{"type": "tool_use", "id": "toolu_" + id, "name": name, "input": map[string]any{"key": id}}
	}
	calls := []any{call("x", "lookup"), call("y", "lookup")}
	if hostCall {
		calls = []any{calls[0], call("s", "slow"), calls[1]}
	}
	return map[string]any{"responses": []any{
		map[string]any{"message": map[string]any{"content": calls}},
		map[string]any{"message": map[string]any{"content": []any{map[string]any{"type": "text", "text": "x is known; y was refused."}}}},
	}}
}

// askingConfig is config with lookup's calls asking (an approval rule: the spec is the same).
func askingConfig(t *testing.T) json.RawMessage {
	var cfg map[string]any
	if err := json.Unmarshal(config(t), &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["approval_rules"] = []any{map[string]any{"tool": "lookup", "decision": "ask"}}
	b, _ := json.Marshal(cfg)
	return b
}

// repo is the repository's root.
func repo(t *testing.T) string {
	r, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// python runs a script of tests/durable/ with the bindings (a separate client or worker process).
func python(t *testing.T, script string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(repo(t), ".venv", "bin", "python"), append([]string{filepath.Join(repo(t), "tests", "durable", script)}, args...)...)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(repo(t), "bindings-py"))
	return cmd
}

func waitingCalls(t *testing.T, c client.Client, id string, n int) []ptemporal.AskedCall {
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		calls, err := ptemporal.Approvals(context.Background(), c, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(calls) >= n {
			return calls
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d calls wait, want %d", len(calls), n)
		}
	}
}

// localAnswered is the asking turn (with its host call) run locally, x approved and y denied.
func localAnswered(t *testing.T, input string) ptemporal.Conversation {
	load(t, asking(true))
	var cfg map[string]any
	_ = json.Unmarshal(askingConfig(t), &cfg)
	delete(cfg, "tools") // the same tools, with their handlers
	b, _ := json.Marshal(cfg)
	agent, err := panto.NewAgentJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	for _, tool := range tools() {
		if err := agent.AddTool(tool); err != nil {
			t.Fatal(err)
		}
	}
	stream, err := agent.Run(context.Background(), input)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	for {
		for stream.Next() {
		}
		if !errors.Is(stream.Err(), panto.ErrApprovalPending) {
			break
		}
		if err := stream.Approve("toolu_x"); err != nil {
			t.Fatal(err)
		}
		if err := stream.Deny("toolu_y", "not y"); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	stream.Close()
	return exported(t, agent)
}

// startAsking starts the asking turn on a worker of this process, the workflow's id that of
// its task queue, and waits until both calls wait.
func startAsking(t *testing.T, prefix string, hostCall bool) (client.Client, client.WorkflowRun, []ptemporal.AskedCall) {
	load(t, asking(hostCall))
	queue := prefix + fmt.Sprint(time.Now().UnixNano())
	c := startWorker(t, queue, nil)
	turn, _ := ptemporal.NewTurn(askingConfig(t), "What are x and y?")
	run, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: queue, TaskQueue: queue}, ptemporal.WorkflowName, turn)
	if err != nil {
		t.Fatal(err)
	}
	return c, run, waitingCalls(t, c, queue, 2)
}

// The answers come from a Python client process (tests/durable/answer.py): the signals'
// names and JSON are the same in both languages.
func TestACallWaitsForASignalFromAnotherProcess(t *testing.T) {
	runs := t.TempDir()
	t.Setenv("DURABLE_RUNS", runs)
	c, run, calls := startAsking(t, "go-ask-", true)
	ctx, id := context.Background(), run.GetID()
	if len(calls) != 2 || calls[0].ID != "toolu_x" || calls[1].Name != "lookup" || string(calls[1].Input) != `{"key":"y"}` {
		t.Fatalf("waiting: %s", mustJSON(calls))
	}
	if n := runsOf(t, runs, "lookup"); n != 0 {
		t.Fatalf("lookup ran %d times before its yes", n)
	}
	// What is not an answer is ignored, the turn unharmed: a bare id, a call that does not
	// wait, a denial without a reason.
	for _, s := range []struct {
		name string
		arg  any
	}{{ptemporal.ApproveSignalName, "toolu_x"}, {ptemporal.ApproveSignalName, ptemporal.Answer{CallID: "toolu_z"}},
		{ptemporal.DenySignalName, ptemporal.Answer{CallID: "toolu_y"}}} {
		if err := c.SignalWorkflow(ctx, id, "", s.name, s.arg); err != nil {
			t.Fatal(err)
		}
	}
	if calls := waitingCalls(t, c, id, 2); len(calls) != 2 {
		t.Fatalf("waiting after answers that are not: %s", mustJSON(calls))
	}
	for _, answer := range [][]string{{"approve", "toolu_x"}, {"deny", "toolu_y", "not y"}} {
		if out, err := python(t, "answer.py", append([]string{address, id}, answer...)...).CombinedOutput(); err != nil {
			t.Fatalf("answer.py %v: %v\n%s", answer, err, out)
		}
	}
	var result ptemporal.Result
	if err := run.Get(ctx, &result); err != nil {
		t.Fatal(err)
	}
	if l, s := runsOf(t, runs, "lookup"), runsOf(t, runs, "slow"); l != 1 || s != 1 {
		t.Fatalf("lookup ran %d times, want 1 (the approved call); slow %d, want 1", l, s)
	}
	if n := modelRequests(t); n != 2 {
		t.Fatalf("%d model requests, want 2", n)
	}
	t.Setenv("DURABLE_RUNS", "")
	if local := localAnswered(t, "What are x and y?"); !sameJSON(t, result.Conversation, local) {
		t.Fatalf("durable:\n%s\nlocal:\n%s", mustJSON(result.Conversation), mustJSON(local))
	}
	if err := ptemporal.Deny(ctx, c, id, "toolu_y", ""); !errors.Is(err, ptemporal.ErrNoReason) {
		t.Fatalf("a deny without a reason: %v", err)
	}
}

func TestACancelWhileCallsWaitLeavesAValidConversation(t *testing.T) {
	c, run, _ := startAsking(t, "go-askcancel-", false)
	ctx, id := context.Background(), run.GetID()
	if err := ptemporal.Approve(ctx, c, id, "toolu_x"); err != nil { // one answered, one waits
		t.Fatal(err)
	}
	if err := c.CancelWorkflow(ctx, id, ""); err != nil {
		t.Fatal(err)
	}
	var canceled *temporal.CanceledError
	if err := run.Get(ctx, nil); !errors.As(err, &canceled) {
		t.Fatalf("the workflow ended with %v, want canceled", err)
	}
	value, err := c.QueryWorkflow(ctx, id, "", ptemporal.QueryName)
	if err != nil {
		t.Fatal(err)
	}
	var conv ptemporal.Conversation
	if err := value.Get(&conv); err != nil {
		t.Fatal(err)
	}
	var results struct {
		Content []struct {
			Content string `json:"content"`
			IsError bool   `json:"is_error"`
		} `json:"content"`
	}
	if len(conv.Messages) != 3 || json.Unmarshal(conv.Messages[2], &results) != nil || len(results.Content) != 2 ||
		!results.Content[0].IsError || !strings.Contains(results.Content[1].Content, "canceled") {
		t.Fatalf("the conversation left: %s", mustJSON(conv))
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

// startPythonWorker starts tests/durable/worker.py on queue, serving only `only`
// ("workflows" or "activities"), its tools counting runs in runs.
func startPythonWorker(t *testing.T, queue, only, runs string) {
	cmd := python(t, "worker.py", address, queue, only)
	cmd.Env = append(cmd.Env, "DURABLE_RUNS="+runs, "ANTHROPIC_API_KEY=durable-test-key")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	r := bufio.NewReader(out)
	if line, err := r.ReadString('\n'); line != "ready\n" {
		t.Fatalf("the Python worker did not start: %q %v", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, r) }()
}

// One task queue, the workflow served by one language and the activities by the other, both
// ways: the workflow's and the activities' names and JSON are really shared.
func TestPythonAndGoWorkersOnOneTaskQueue(t *testing.T) {
	for _, pythonServes := range []string{"workflows", "activities"} {
		t.Run("python "+pythonServes, func(t *testing.T) {
			load(t, twoRounds)
			runs := t.TempDir()
			t.Setenv("DURABLE_RUNS", runs)
			queue := "go-mixed-" + pythonServes + fmt.Sprint(time.Now().UnixNano())
			startPythonWorker(t, queue, pythonServes, runs)
			c, err := client.Dial(client.Options{HostPort: address})
			if err != nil {
				t.Fatal(err)
			}
			w := worker.New(c, queue, worker.Options{MaxHeartbeatThrottleInterval: time.Second})
			if pythonServes == "workflows" {
				ptemporal.RegisterActivities(w, tools(), nil)
			} else {
				ptemporal.RegisterWorkflow(w)
			}
			if err := w.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { w.Stop(); c.Close() })
			turn, _ := ptemporal.NewTurn(config(t), "What are a and b?")
			// A name or a JSON one side does not take would leave the turn waiting: fail instead.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: queue}, ptemporal.WorkflowName, turn)
			if err != nil {
				t.Fatal(err)
			}
			var result ptemporal.Result
			if err := run.Get(ctx, &result); err != nil {
				t.Fatal(err)
			}
			// The tools ran in the process that serves the activities.
			b, _ := os.ReadFile(filepath.Join(runs, "lookup.runs"))
			self := fmt.Sprint(os.Getpid())
			if pids := strings.Fields(string(b)); len(pids) != 1 || (pids[0] == self) != (pythonServes == "workflows") {
				t.Fatalf("lookup ran in %v (this process: %s)", pids, self)
			}
			t.Setenv("DURABLE_RUNS", "")
			if local := localTurn(t, emulatorURL, twoRounds, "What are a and b?"); !sameJSON(t, result.Conversation, local) {
				t.Fatalf("durable:\n%s\nlocal:\n%s", mustJSON(result.Conversation), mustJSON(local))
			}

			// Approvals across the languages: the activity's "asked" and "denial", the signals.
			load(t, asking(true))
			turn, _ = ptemporal.NewTurn(askingConfig(t), "What are x and y?")
			id := queue + "-ask"
			run, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, ptemporal.WorkflowName, turn)
			if err != nil {
				t.Fatal(err)
			}
			waitingCalls(t, c, id, 2)
			if err := ptemporal.Approve(ctx, c, id, "toolu_x"); err != nil {
				t.Fatal(err)
			}
			if err := ptemporal.Deny(ctx, c, id, "toolu_y", "not y"); err != nil {
				t.Fatal(err)
			}
			if err := run.Get(ctx, &result); err != nil {
				t.Fatal(err)
			}
			if local := localAnswered(t, "What are x and y?"); !sameJSON(t, result.Conversation, local) {
				t.Fatalf("durable:\n%s\nlocal:\n%s", mustJSON(result.Conversation), mustJSON(local))
			}
		})
	}
}
