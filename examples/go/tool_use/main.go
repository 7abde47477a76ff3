// A tool round trip from Go: the model asks for the weather, panto runs the tool while we
// iterate, and the model answers with the result. See examples/README.md.
package main

import (
	"context"
	"fmt"
	"os"

	"panto.dev/examples/internal/envconfig"
	"panto.dev/panto"
)

type weatherInput struct {
	City string `json:"city" description:"The city, e.g. \"Paris\""`
}

func main() {
	getWeather := panto.MustNewTool("get_weather", "Current weather for a city.",
		func(ctx context.Context, in weatherInput) (string, error) {
			return "Sunny, 21 degrees in " + in.City, nil
		})
	cfg := envconfig.Config()
	cfg.Tools = []panto.Tool{getWeather}
	agent, err := panto.NewAgent(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer agent.Close()
	stream, err := agent.Run(context.Background(), "What is the weather in Paris?")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Print("[go] ")
	for ev := range stream.Iter {
		switch {
		case ev.Kind == panto.EventToolCallStart:
			fmt.Printf("\n  -> %s(%s)\n", ev.Name, ev.Input())
		case ev.Kind == panto.EventToolResult:
			fmt.Printf("  <- %s\n", ev.Text)
		case ev.Kind == panto.EventContentDelta && ev.BlockKind == panto.BlockText:
			fmt.Print(ev.Text)
		}
	}
	if err := stream.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "\nturn failed:", err)
		os.Exit(1)
	}
}
