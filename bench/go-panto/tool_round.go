package main

// The tool-round workload (bench/tool_round.py): each round is one turn whose first message
// asks for the three host tools, each sleeping 200 ms, then answers. ROUNDS rounds run with
// tool_execution "parallel", then ROUNDS with "sequential"; one JSON line a round:
// {"mode": M, "wall_ms": W}, W from Run to the end of the turn.
//
//	go-panto tool-round PROVIDER BASE_URL ROUNDS

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	"panto.dev/panto"
)

// toolRoundTools are the tools the tool round's script asks for.
var toolRoundTools = []string{"sleep_a", "sleep_b", "sleep_c"}

func toolRound(provider, baseURL, count string) {
	rounds, err := strconv.Atoi(count)
	if err != nil || rounds < 1 {
		fmt.Fprintln(os.Stderr, "usage: go-panto tool-round PROVIDER BASE_URL ROUNDS")
		os.Exit(2)
	}
	var tools []panto.Tool
	for _, name := range toolRoundTools {
		tools = append(tools, panto.Tool{Name: name, Description: "Sleeps 200 ms.",
			Handler: func(ctx context.Context, _ json.RawMessage) (string, error) {
				select {
				case <-time.After(200 * time.Millisecond):
					return "slept", nil
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}})
	}
	model := map[string]string{"anthropic": "claude-sonnet-4-6", "openai": "gpt-4o-mini"}[provider]
	out := json.NewEncoder(os.Stdout)
	for _, mode := range []panto.ToolExecution{panto.ToolsParallel, panto.ToolsSequential} {
		agent, err := panto.NewAgent(panto.Config{Provider: provider, Model: model, BaseURL: baseURL,
			APIKey: "bench", MaxTokens: 1024, Tools: tools, ToolExecution: mode})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for range rounds {
			start := time.Now()
			if _, err := agent.Complete(context.Background(), "Run the three tools."); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			wall := float64(time.Since(start).Microseconds()) / 1000
			_ = out.Encode(map[string]any{"mode": string(mode), "wall_ms": wall})
		}
		agent.Close()
	}
}
