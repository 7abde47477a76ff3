// Package proto is the harness protocol of the Go peer consumers (bench/README.md).
package proto

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
)

func CPUSeconds() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

func Ready() { fmt.Printf("READY %.6f\n", CPUSeconds()) }

var firstOnce sync.Once

func First() { firstOnce.Do(func() { os.Stdout.WriteString("FIRST\n") }) }

func End(events, bytes int) { fmt.Printf("END %d %d %.6f\n", events, bytes, CPUSeconds()) }

// Args reads MODE BASE_URL [STREAMS].
func Args() (mode, baseURL string, streams int) {
	if len(os.Args) < 3 {
		fmt.Fprintf(os.Stderr, "usage: %s raw|accumulate|turns|waiting BASE_URL [STREAMS]\n", os.Args[0])
		os.Exit(2)
	}
	streams = 1
	if len(os.Args) > 3 {
		streams, _ = strconv.Atoi(os.Args[3])
		streams = max(streams, 1)
	}
	return os.Args[1], os.Args[2], streams
}

// Run runs one on `streams` goroutines and prints END with the sums; exits 1 on an error.
func Run(streams int, one func() (int, int, error)) {
	var mu sync.Mutex
	var events, bytes int
	var firstErr error
	var wg sync.WaitGroup
	for range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, b, err := one()
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
	End(events, bytes)
	if firstErr != nil {
		fmt.Fprintln(os.Stderr, firstErr)
		os.Exit(1)
	}
}
