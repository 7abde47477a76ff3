package main

// The latency workload (bench/latency.py): one agent, one tool turn (its `ping` tool has a
// Handler, so the binding runs the tool loop), then TURNS plain turns, each timed here. It
// prints the latency protocol of bench/clients/turnsproto.py.
//
//	go-panto turns PROVIDER BASE_URL TURNS

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	"panto.dev/panto"
)

const (
	toolPrompt  = "Call ping until you are done (tool rounds: 3)."
	plainPrompt = "Hello"
)

func turns(provider, baseURL, count string) {
	n, err := strconv.Atoi(count)
	if err != nil {
		fmt.Fprintln(os.Stderr, "usage: go-panto turns PROVIDER BASE_URL TURNS")
		os.Exit(2)
	}
	calls := 0
	ping := panto.Tool{
		Name:        "ping",
		Description: "Answers pong.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"round":{"type":"integer"}}}`),
		Handler: func(ctx context.Context, input json.RawMessage) (string, error) {
			calls++
			return "pong", nil
		},
	}
	model := map[string]string{"anthropic": "claude-sonnet-4-6", "openai": "gpt-4o-mini"}[provider]
	agent, err := panto.NewAgent(panto.Config{Provider: provider, Model: model, BaseURL: baseURL, APIKey: "bench",
		MaxTokens: 1024, Tools: []panto.Tool{ping}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer agent.Close()
	turn := func(prompt string) int {
		stream, err := agent.Run(context.Background(), prompt)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		bytes := 0
		for ev := range stream.Iter {
			if ev.Kind == panto.EventContentDelta && ev.BlockKind == panto.BlockText {
				bytes += len(ev.Text)
			}
		}
		if err := stream.Err(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return bytes
	}

	fmt.Printf("READY %.6f\n", cpuSeconds())
	t := time.Now()
	bytes := turn(toolPrompt)
	fmt.Printf("TOOL %.6f %d %d\n", time.Since(t).Seconds(), calls, bytes)
	for range n {
		t = time.Now()
		bytes = turn(plainPrompt)
		fmt.Printf("TURN %.6f %d\n", time.Since(t).Seconds(), bytes)
	}
	fmt.Printf("END %.6f\n", cpuSeconds())
}
