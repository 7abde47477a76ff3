// One streamed turn from Go: print the text as it arrives. See examples/README.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

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

	stream, err := agent.Run(context.Background(), "Say hello from Go in one sentence.")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Print("[go] ")
	for ev := range stream.Iter {
		switch {
		case ev.Kind == panto.EventContentDelta && ev.BlockKind == panto.BlockText:
			fmt.Print(ev.Text)
		case ev.Kind == panto.EventMessageComplete:
			fmt.Printf("    (%s, %d tokens out)\n", ev.StopReason, ev.Usage.OutputTokens)
		}
	}
	if err := stream.Err(); err != nil {
		var perr *panto.Error
		if errors.As(err, &perr) {
			fmt.Fprintf(os.Stderr, "\nturn failed (%s, HTTP %d): %s\n", perr.Code, perr.HTTPStatus, perr.Message)
		} else {
			fmt.Fprintln(os.Stderr, err)
		}
		os.Exit(1)
	}
}
