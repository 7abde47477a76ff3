// A conversation from Go: two turns on one agent; the second one sees the first (the agent
// keeps the conversation and sends it whole). See examples/README.md.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"panto.dev/panto"
)

func main() {
	provider := os.Getenv("PANTO_PROVIDER")
	if provider == "" {
		provider = "anthropic"
		if os.Getenv("ANTHROPIC_API_KEY") == "" && os.Getenv("OPENAI_API_KEY") != "" {
			provider = "openai"
		}
	}
	model := os.Getenv("PANTO_MODEL")
	if model == "" {
		model = map[string]string{"anthropic": "claude-sonnet-4-5", "openai": "gpt-4o-mini"}[provider]
	}
	agent, err := panto.NewAgent(panto.Config{
		Provider: provider, Model: model, MaxTokens: 300,
		BaseURL: os.Getenv("PANTO_BASE_URL"), APIKey: os.Getenv("PANTO_API_KEY"),
		System: "Answer in one short sentence.",
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer agent.Close()

	for number, prompt := range []string{"Hi, my name is Ada.", "What is my name?"} {
		stream, err := agent.Run(context.Background(), prompt)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("[go] turn %d: ", number+1)
		for ev := range stream.Iter {
			if ev.Kind == panto.EventContentDelta && ev.BlockKind == panto.BlockText {
				fmt.Print(ev.Text)
			}
		}
		if err := stream.Err(); err != nil {
			fmt.Fprintln(os.Stderr, "\nturn failed:", err)
			os.Exit(1)
		}
		stream.Close()
	}

	conversation, err := agent.Conversation()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	roles := make([]string, len(conversation))
	for i, message := range conversation {
		roles[i] = message.Role
	}
	fmt.Printf("[go] conversation: %d messages (%s)\n", len(roles), strings.Join(roles, ", "))
}
