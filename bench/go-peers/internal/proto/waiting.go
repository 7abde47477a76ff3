package proto

import (
	"bufio"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Waiting runs one on `streams` goroutines at once against a server that answers late
// (bench/waiting.py's side by side, as go-panto's `waiting`) and prints one line:
//
//	streams=N wall_s=W cpu_s=C threads_peak=T threads_created=K rss_peak_kb=R
//
// threads_peak samples /proc/self/status every millisecond while the turns run; rss_peak_kb
// is VmHWM at the end. Exits 1 when a turn failed.
func Waiting(streams int, one func() (int, int, error)) {
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
	cpuBefore := CPUSeconds()
	start := time.Now()
	var failed atomic.Int64
	var firstErr sync.Once
	var wg sync.WaitGroup
	for range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := one(); err != nil {
				failed.Add(1)
				firstErr.Do(func() { fmt.Fprintln(os.Stderr, err) })
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	cpu := CPUSeconds() - cpuBefore
	close(stop)
	<-sampled
	fmt.Printf("streams=%d wall_s=%.3f cpu_s=%.3f threads_peak=%d threads_created=%d rss_peak_kb=%d\n",
		streams, wall.Seconds(), cpu, peak.Load(), threads.Count()-createdBefore, statusField("VmHWM"))
	if n := failed.Load(); n > 0 {
		fmt.Fprintf(os.Stderr, "%d of %d turns failed\n", n, streams)
		os.Exit(1)
	}
}

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
