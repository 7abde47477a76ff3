// The panto Go consumer of `make bench`: streams one turn (or STREAMS turns on as many
// goroutines, one agent each) and counts the ContentDelta events, summing their text length.
//
//	go-panto PROVIDER BASE_URL [STREAMS]
//	go-panto turns PROVIDER BASE_URL TURNS     the latency workload (turns.go)
//	go-panto waiting BASE_URL STREAMS         turns that all wait at once (waiting.go)
//	go-panto delayed-server DELAY_MS          their server: each answer DELAY_MS late (delayed.go)
//
// It speaks the harness protocol on stdout (bench/README.md). With BENCH_TOGETHER=1, every
// stream waits after its first delta until all have one (the 1,000-stream memory
// measurement: all open at once).
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"

	"panto.dev/panto"
)

func cpuSeconds() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

var firstOnce sync.Once

func first() { firstOnce.Do(func() { os.Stdout.WriteString("FIRST\n") }) }

// started, when not nil, counts down the streams that have their first delta.
var started *sync.WaitGroup

func consume(agent *panto.Agent) (events, bytes int, err error) {
	if started != nil {
		defer func() {
			if events == 0 {
				started.Done() // do not leave the others waiting
			}
		}()
	}
	stream, err := agent.Run(context.Background(), "Hello")
	if err != nil {
		return 0, 0, err
	}
	for ev := range stream.Iter {
		if ev.Kind == panto.EventContentDelta {
			if events == 0 {
				first()
				if started != nil {
					started.Done()
					started.Wait()
				}
			}
			events++
			bytes += len(ev.Text)
		}
	}
	return events, bytes, stream.Err()
}

func main() {
	if len(os.Args) == 5 && os.Args[1] == "turns" {
		turns(os.Args[2], os.Args[3], os.Args[4])
		return
	}
	if len(os.Args) == 5 && os.Args[1] == "tool-round" { // BASE_URL MODE ROUNDS
		toolRound(os.Args[2], os.Args[3], os.Args[4])
		return
	}
	if len(os.Args) == 3 && os.Args[1] == "delayed-server" {
		delayedServer(os.Args[2])
		return
	}
	if len(os.Args) == 4 && os.Args[1] == "waiting" {
		waiting(os.Args[2], os.Args[3])
		return
	}
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: go-panto anthropic|openai|openai-responses|gemini|bedrock BASE_URL [STREAMS]")
		os.Exit(2)
	}
	provider, baseURL := os.Args[1], os.Args[2]
	streams := 1
	if len(os.Args) > 3 {
		streams, _ = strconv.Atoi(os.Args[3])
		streams = max(streams, 1)
	}
	model := map[string]string{"anthropic": "claude-sonnet-4-6", "openai": "gpt-4o-mini", "openai-responses": "gpt-4o-mini",
		"gemini": "gemini-2.5-flash", "bedrock": "anthropic.claude-sonnet-4-5-20250929-v1:0"}[provider]
	apiKey := "bench"
	if provider == "bedrock" {
		apiKey = "" // it signs (SigV4) with the AWS_* keys the harness puts in the environment
	}
	if streams > 1 && os.Getenv("BENCH_TOGETHER") == "1" {
		started = &sync.WaitGroup{}
		started.Add(streams)
	}
	agents := make([]*panto.Agent, streams)
	for i := range agents {
		a, err := panto.NewAgent(panto.Config{Provider: provider, Model: model, BaseURL: baseURL, APIKey: apiKey, MaxTokens: 1024})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer a.Close()
		agents[i] = a
	}

	fmt.Printf("READY %.6f\n", cpuSeconds())
	var mu sync.Mutex
	var events, bytes int
	var firstErr error
	var wg sync.WaitGroup
	for _, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, b, err := consume(a)
			mu.Lock()
			defer mu.Unlock()
			events += e
			bytes += b
			if err != nil && firstErr == nil {
				firstErr = err
			}
		}()
	}
	wg.Wait()
	fmt.Printf("END %d %d %.6f\n", events, bytes, cpuSeconds())
	if firstErr != nil {
		fmt.Fprintln(os.Stderr, firstErr)
		os.Exit(1)
	}
}
