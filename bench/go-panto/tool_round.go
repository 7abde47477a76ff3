package main

// The tool-round workload (bench/README.md, "Tool round"): ROUNDS turns on one agent whose
// tool_execution is MODE; each turn's first message asks for the tool `wait` three times,
// each call sleeping 200 ms, then the model answers "done". One JSON line a round:
// {"mode": MODE, "wall_ms": W}, W from just before Run to the end of the turn.
//
//	go-panto tool-round BASE_URL MODE ROUNDS

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	"panto.dev/panto"
)

func toolRound(baseURL, mode, count string) {
	rounds, err := strconv.Atoi(count)
	if err != nil || rounds < 1 || (mode != "parallel" && mode != "sequential") {
		fmt.Fprintln(os.Stderr, "usage: go-panto tool-round BASE_URL parallel|sequential ROUNDS")
		os.Exit(2)
	}
	wait := panto.Tool{
		Name:        "wait",
		Description: "Waits 200 ms.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"i":{"type":"integer"}}}`),
		Handler: func(context.Context, json.RawMessage) (string, error) {
			time.Sleep(200 * time.Millisecond)
			return "ok", nil
		},
	}
	agent, err := panto.NewAgent(panto.Config{Provider: "anthropic", Model: "bench-model", APIKey: "bench-key",
		BaseURL: baseURL, ToolExecution: panto.ToolExecution(mode), Tools: []panto.Tool{wait}})
	if err != nil {
		fail(err)
	}
	defer agent.Close()
	out := json.NewEncoder(os.Stdout)
	for i := range rounds {
		start := time.Now()
		msg, err := agent.Complete(context.Background(), fmt.Sprintf("round %d", i+1))
		wall := float64(time.Since(start).Nanoseconds()) / 1e6
		if err != nil {
			fail(err)
		}
		if msg.Text() != "done" {
			fail(fmt.Errorf("round %d answered %q, want \"done\"", i+1, msg.Text()))
		}
		if err := out.Encode(map[string]any{"mode": mode, "wall_ms": wall}); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "go-panto:", err)
	os.Exit(1)
}
