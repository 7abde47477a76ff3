// Command crash-driver is the Go driver of the crash test (tests/crash/):
//
//	crash-driver BASE_URL SESSION_DIR SESSION_ID START
//
// It opens the session SESSION_ID of SESSION_DIR (resuming it when it exists) and runs the
// turns "turn START", "turn START+1", ... until it is killed, printing `user N` once Run has
// returned (the user message is then on disk), `assistant N` once the turn's MessageEnd
// came (the assistant message is on disk), and `done N` at the end of the turn. Each line is
// one write to stdout, which is not buffered. Any failure ends it with status 1.
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"panto.dev/panto"
)

func main() {
	if len(os.Args) != 5 {
		fail("usage: crash-driver BASE_URL SESSION_DIR SESSION_ID START")
	}
	start, err := strconv.Atoi(os.Args[4])
	if err != nil {
		fail("START: " + err.Error())
	}
	agent, err := panto.NewAgent(panto.Config{
		Provider: "anthropic", Model: "claude-test", APIKey: "k", BaseURL: os.Args[1],
		Session: &panto.Session{Dir: os.Args[2], ID: os.Args[3]},
	})
	if err != nil {
		fail(err.Error())
	}
	defer agent.Close()
	for n := start; ; n++ {
		stream, err := agent.Run(context.Background(), fmt.Sprintf("turn %d", n))
		if err != nil {
			fail(err.Error())
		}
		say("user", n)
		for ev := range stream.Iter {
			if ev.Kind == panto.EventMessageEnd {
				say("assistant", n)
			}
		}
		if err := stream.Err(); err != nil {
			fail(err.Error())
		}
		say("done", n)
	}
}

// say prints one line in one write: os.Stdout is not buffered.
func say(what string, n int) {
	if _, err := fmt.Fprintf(os.Stdout, "%s %d\n", what, n); err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "crash-driver:", msg)
	os.Exit(1)
}
