package panto_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"panto.dev/panto"
)

// Streams one turn and prints the answer as it arrives. The provider here is the emulator
// that TestMain starts; a real program leaves BaseURL empty and sets APIKey (or
// $ANTHROPIC_API_KEY).
func Example() {
	if err := postScenario(scenario(textAnswer("Hello world"))); err != nil {
		fmt.Println(err)
		return
	}

	agent, err := panto.NewAgent(panto.Config{
		Provider: "anthropic",
		Model:    "claude-sonnet-4-5",
		BaseURL:  emulatorURL,
		APIKey:   "test-key",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer agent.Close()

	stream, err := agent.Run(context.Background(), "Say hello")
	if err != nil {
		fmt.Println(err)
		return
	}
	for ev := range stream.Iter {
		switch ev.Kind {
		case panto.EventContentDelta:
			fmt.Print(ev.Text)
		case panto.EventMessageComplete:
			fmt.Printf("\n[%s, %d tokens out]\n", ev.StopReason, ev.Usage.OutputTokens)
		}
	}
	if err := stream.Err(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// Hello world
	// [end_turn, 3 tokens out]
}

// Reads a turn Scanner-style, and tells a failure by its code. The provider is rate
// limiting: the agent tries once more after a short pause, then gives up.
func ExampleStream_Next() {
	limited := map[string]any{
		"status": 429,
		"error":  map[string]any{"type": "rate_limit_error", "message": "slow down"},
	}
	if err := postScenario(scenario(limited, limited)); err != nil {
		fmt.Println(err)
		return
	}
	agent, err := panto.NewAgent(panto.Config{Provider: "openai", Model: "gpt-test",
		BaseURL: emulatorURL, APIKey: "test-key",
		Retry: &panto.RetryPolicy{MaxRetries: 1, InitialDelay: 10 * time.Millisecond}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer agent.Close()
	stream, err := agent.Run(context.Background(), "Hello")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stream.Close()
	for stream.Next() {
		ev := stream.Event()
		switch ev.Kind {
		case panto.EventProviderRetry:
			fmt.Printf("retry %d after HTTP %d (%s)\n", ev.Attempt, ev.HTTPStatus, ev.Text)
		default:
			fmt.Println(ev.Kind)
		}
	}
	err = stream.Err()
	var perr *panto.Error
	switch {
	case errors.Is(err, panto.ErrRateLimit) && errors.As(err, &perr):
		fmt.Println("rate limited, HTTP", perr.HTTPStatus)
	case err != nil:
		fmt.Println("failed:", err)
	}
	// Output:
	// retry 1 after HTTP 429 (rate_limit_error: slow down)
	// rate limited, HTTP 429
}
