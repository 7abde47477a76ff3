// Canceling a turn from Go: the context given to Run bounds the turn; a goroutine calls
// cancel() shortly after the first text arrives. The partial answer stays in the
// conversation, marked aborted, and the next turn works. See examples/README.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"panto.dev/examples/internal/envconfig"
	"panto.dev/panto"
)

func main() {
	cfg := envconfig.Config()
	agent, err := panto.NewAgent(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer agent.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := agent.Run(ctx, "Tell me a very long story.")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Print("[go] partial: ")
	armed := false
	for ev := range stream.Iter {
		if ev.Kind == panto.EventContentDelta && ev.BlockKind == panto.BlockText {
			fmt.Print(ev.Text)
			if !armed { // cancel from another goroutine, 100 ms after the first text
				armed = true
				time.AfterFunc(100*time.Millisecond, cancel)
			}
		}
	}
	err = stream.Err()
	var perr *panto.Error
	if !errors.Is(err, panto.ErrCanceled) || !errors.As(err, &perr) {
		fmt.Fprintln(os.Stderr, "\n[go] the turn was not canceled:", err)
		os.Exit(1)
	}
	fmt.Printf("\n[go] error: %s (%s)\n", perr.Code.String(), perr.Message)
	stream.Close()

	conversation, err := agent.Conversation()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	last := conversation[len(conversation)-1]
	var kept strings.Builder
	for _, block := range last.Content {
		if block.Type == "text" {
			kept.WriteString(block.Text)
		}
	}
	fmt.Printf("[go] kept: %s %q\n", last.StopReason, kept.String())

	stream, err = agent.Run(context.Background(), "Then tell me the short version.")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer stream.Close()
	fmt.Print("[go] second turn: ")
	for ev := range stream.Iter {
		if ev.Kind == panto.EventContentDelta && ev.BlockKind == panto.BlockText {
			fmt.Print(ev.Text)
		}
	}
	if err := stream.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "\nturn failed:", err)
		os.Exit(1)
	}
	conversation, _ = agent.Conversation()
	fmt.Printf("[go] conversation: %d messages\n", len(conversation))
}
