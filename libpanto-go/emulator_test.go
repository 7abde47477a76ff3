package panto_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// emulatorURL is the base URL of the provider emulator that TestMain starts.
var emulatorURL string

// TestMain runs the tests against one provider emulator
// (`python -m panto.emulator --port 0`, from the repository's .venv), stopped at the end.
// The tests load their scenario into it one after the other: none is parallel.
func TestMain(m *testing.M) {
	stop, err := startEmulator()
	if err != nil {
		fmt.Fprintln(os.Stderr, "panto tests:", err)
		os.Exit(1)
	}
	code := m.Run()
	stop()
	os.Exit(code)
}

func startEmulator() (stop func(), err error) {
	repo, err := filepath.Abs("..")
	if err != nil {
		return nil, err
	}
	python := filepath.Join(repo, ".venv", "bin", "python")
	cmd := exec.Command(python, "-m", "panto.emulator", "--port", "0")
	cmd.Dir = repo
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PYTHONPATH=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "PYTHONPATH="+filepath.Join(repo, "bindings-py"))
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start the emulator with %s: %w", python, err)
	}
	stop = func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}

	first := make(chan string, 1)
	go func() {
		r := bufio.NewReader(out)
		line, _ := r.ReadString('\n')
		first <- line
		_, _ = io.Copy(io.Discard, r) // keep the pipe drained
	}()
	const prefix = "panto-emulator listening on "
	select {
	case line := <-first:
		if !strings.HasPrefix(line, prefix) {
			stop()
			return nil, fmt.Errorf("the emulator did not start: %q\n%s", line, stderr.String())
		}
		emulatorURL = strings.TrimRight(strings.TrimSpace(strings.TrimPrefix(line, prefix)), "/")
		return stop, nil
	case <-time.After(15 * time.Second):
		stop()
		return nil, fmt.Errorf("the emulator printed nothing within 15s\n%s", stderr.String())
	}
}

// trackLibrary opens the module's libpanto.a once, from within the tests. go's caches do
// not see the libraries cgo links; a file opened while the tests run (TestMain is too early)
// is part of the test result's cache key, if it is inside the module: a rebuilt library
// (make go-lib) then invalidates cached results.
var trackLibrary = sync.OnceFunc(func() {
	if f, err := os.Open(filepath.Join("lib", runtime.GOOS+"_"+runtime.GOARCH, "libpanto.a")); err == nil {
		f.Close()
	}
})

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// loadScenario loads an emulator scenario (see bindings-py/panto/emulator); it also
// clears the request log.
func loadScenario(t testing.TB, scenario any) {
	t.Helper()
	if err := postScenario(scenario); err != nil {
		t.Fatal(err)
	}
}

func postScenario(scenario any) error {
	trackLibrary()
	body, err := json.Marshal(scenario)
	if err != nil {
		return err
	}
	resp, err := http.Post(emulatorURL+"/_emulator/scenario", "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("loading the scenario: HTTP %d: %s", resp.StatusCode, msg)
	}
	return nil
}

// emulatorRequest is one provider request the emulator received.
type emulatorRequest struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers"`
	Body    json.RawMessage   `json:"body"`
	// Connection numbers the TCP connections the requests came on, from 1.
	Connection int `json:"connection"`
}

func receivedRequests(t testing.TB) []emulatorRequest {
	t.Helper()
	resp, err := http.Get(emulatorURL + "/_emulator/requests")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var reqs []emulatorRequest
	if err := json.NewDecoder(resp.Body).Decode(&reqs); err != nil {
		t.Fatal(errors.Join(errors.New("reading /_emulator/requests"), err))
	}
	return reqs
}

// textAnswer is a scripted answer holding one text block.
func textAnswer(text string) map[string]any {
	return map[string]any{"message": map[string]any{
		"content":     []any{map[string]any{"type": "text", "text": text}},
		"stop_reason": "end_turn",
		"usage":       map[string]any{"input_tokens": 12, "output_tokens": 3},
	}}
}

func scenario(responses ...map[string]any) map[string]any {
	return map[string]any{"responses": responses}
}
