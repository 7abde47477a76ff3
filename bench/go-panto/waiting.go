package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"panto.dev/panto"
)

// waiting runs STREAMS turns at once, one agent each, against a server that answers each
// request after a delay (delayed-server, see bench/waiting.py): what waiting
// streams cost. It prints one line:
//
//	streams=N wall_s=W cpu_s=C threads_peak=T threads_created=K rss_peak_kb=R
//
// threads_peak samples /proc/self/status every millisecond while the turns run;
// rss_peak_kb is VmHWM at the end.
func waiting(baseURL, n string) {
	streams, err := strconv.Atoi(n)
	if err != nil || streams < 1 {
		fail(fmt.Errorf("STREAMS %q: want a positive number", n))
	}
	agents := make([]*panto.Agent, streams)
	for i := range agents {
		a, err := panto.NewAgent(panto.Config{Provider: "anthropic", Model: "claude-sonnet-4-6", BaseURL: baseURL,
			APIKey: "bench", MaxTokens: 1024, Retry: &panto.RetryPolicy{MaxRetries: panto.NoRetries}})
		if err != nil {
			fail(err)
		}
		defer a.Close()
		agents[i] = a
	}

	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			peak.Store(max(peak.Load(), statusField("Threads")))
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()

	threads := pprof.Lookup("threadcreate")
	createdBefore := threads.Count()
	cpuBefore := cpuSeconds()
	start := time.Now()
	errs := make(chan error, streams)
	var wg sync.WaitGroup
	for _, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stream, err := a.Run(context.Background(), "Hello")
			if err != nil {
				errs <- err
				return
			}
			for range stream.Iter {
			}
			if err := stream.Err(); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	cpu := cpuSeconds() - cpuBefore
	close(stop)
	<-sampled
	close(errs)
	failed := 0
	for err := range errs {
		if failed == 0 {
			fmt.Fprintln(os.Stderr, err)
		}
		failed++
	}
	fmt.Printf("streams=%d wall_s=%.3f cpu_s=%.3f threads_peak=%d threads_created=%d rss_peak_kb=%d\n",
		streams, wall.Seconds(), cpu, peak.Load(), threads.Count()-createdBefore, statusField("VmHWM"))
	if failed > 0 {
		fail(fmt.Errorf("%d of %d turns failed", failed, streams))
	}
}

// statusField is a number of /proc/self/status ("Threads", "VmHWM" in kB); 0 if missing.
func statusField(name string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		if rest, ok := strings.CutPrefix(lines.Text(), name+":"); ok {
			v, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			return v
		}
	}
	return 0
}
