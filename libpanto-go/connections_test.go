package panto_test

// Tests of an agent's connections against the provider emulator, which numbers the TCP
// connections its requests came on: Agent.Connections, Config.KeepAlive and NoKeepAlive.

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"panto.dev/panto"
)

// runTurns runs each text as a turn to its end.
func runTurns(t *testing.T, agent *panto.Agent, texts ...string) {
	t.Helper()
	for _, text := range texts {
		stream := run(t, agent, text)
		if nextAll(stream); stream.Err() != nil {
			t.Fatalf("turn %q: %v", text, stream.Err())
		}
		stream.Close()
	}
}

func connections(t *testing.T, agent *panto.Agent) panto.Connections {
	t.Helper()
	c, err := agent.Connections()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// connectionNumbers are the emulator's numbers of the connections its requests came on.
func connectionNumbers(t *testing.T) []int {
	t.Helper()
	var numbers []int
	for _, r := range receivedRequests(t) {
		numbers = append(numbers, r.Connection)
	}
	return numbers
}

func repeatedText() map[string]any {
	return map[string]any{"responses": []any{textAnswer("Hello")}, "repeat_last": true}
}

func TestConnectionsAreKeptAliveAndCounted(t *testing.T) {
	loadScenario(t, repeatedText())
	agent := newAgent(t, testConfig("anthropic"))
	if got := connections(t, agent); got != (panto.Connections{}) {
		t.Fatalf("before a turn: %+v", got)
	}
	runTurns(t, agent, "one", "two", "three")
	if got, want := connections(t, agent), (panto.Connections{Opened: 1, Reused: 2}); got != want {
		t.Fatalf("Connections() = %+v, want %+v", got, want)
	}
	if got := connectionNumbers(t); !reflect.DeepEqual(got, []int{1, 1, 1}) {
		t.Fatalf("the emulator's connections: %v", got)
	}
	agent.Close()
	if _, err := agent.Connections(); !errors.Is(err, panto.ErrClosed) {
		t.Fatalf("after Close: %v, want ErrClosed", err)
	}
}

func TestNoKeepAliveOpensOneConnectionPerRequest(t *testing.T) {
	loadScenario(t, repeatedText())
	cfg := testConfig("anthropic")
	cfg.KeepAlive = &panto.KeepAlive{Idle: panto.NoKeepAlive}
	agent := newAgent(t, cfg)
	runTurns(t, agent, "one", "two")
	if got, want := connections(t, agent), (panto.Connections{Opened: 2, Reused: 0}); got != want {
		t.Fatalf("Connections() = %+v, want %+v", got, want)
	}
	for i, r := range receivedRequests(t) {
		if r.Headers["connection"] != "close" {
			t.Fatalf("request %d says connection: %q, want close", i, r.Headers["connection"])
		}
	}
	// Kept alive again from the next request on.
	if err := agent.SetConfig(panto.ConfigPatch{KeepAlive: &panto.KeepAlive{Idle: time.Minute}}); err != nil {
		t.Fatal(err)
	}
	runTurns(t, agent, "three", "four")
	if got, want := connections(t, agent), (panto.Connections{Opened: 3, Reused: 1}); got != want {
		t.Fatalf("Connections() = %+v, want %+v", got, want)
	}
	if got := connectionNumbers(t); !reflect.DeepEqual(got, []int{1, 2, 3, 3}) {
		t.Fatalf("the emulator's connections: %v", got)
	}
}

func TestAConnectionIdleLongerThanKeepAliveIsNotReused(t *testing.T) {
	loadScenario(t, repeatedText())
	cfg := testConfig("anthropic")
	cfg.KeepAlive = &panto.KeepAlive{Idle: 10 * time.Millisecond}
	agent := newAgent(t, cfg)
	runTurns(t, agent, "one")
	time.Sleep(100 * time.Millisecond) // longer than Idle
	runTurns(t, agent, "two")
	if got, want := connections(t, agent), (panto.Connections{Opened: 2, Reused: 0}); got != want {
		t.Fatalf("Connections() = %+v, want %+v", got, want)
	}
	if got := connectionNumbers(t); !reflect.DeepEqual(got, []int{1, 2}) {
		t.Fatalf("the emulator's connections: %v", got)
	}
}

func TestKeepAliveValuesAreChecked(t *testing.T) {
	trackLibrary()
	cfg := panto.Config{Provider: "anthropic", Model: "m", APIKey: "k", KeepAlive: &panto.KeepAlive{Idle: 25 * time.Hour}}
	_, err := panto.NewAgent(cfg)
	if perr := asPantoError(t, err, panto.ErrConfig); perr.Message != "keep_alive.idle_ms must be an integer from 0 to 86400000" {
		t.Fatalf("message = %q", perr.Message)
	}
	cfg.KeepAlive = nil
	agent := newAgent(t, cfg)
	err = agent.SetConfigJSON([]byte(`{"keep_alive":{"idle_ms":-1}}`))
	if perr := asPantoError(t, err, panto.ErrConfig); perr.Message != "keep_alive.idle_ms must be an integer from 0 to 86400000" {
		t.Fatalf("message = %q", perr.Message)
	}
}
