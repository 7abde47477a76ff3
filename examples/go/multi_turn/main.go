// A conversation from Go: two turns on one agent; the second one sees the first (the agent
// keeps the conversation and sends it whole). See examples/README.md.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"panto.dev/examples/internal/envconfig"
	"panto.dev/panto"
)

func main() {
	cfg := envconfig.Config()
	cfg.System = "Answer in one short sentence."
	agent, err := panto.NewAgent(cfg)
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
