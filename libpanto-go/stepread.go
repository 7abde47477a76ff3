package panto

/*
#include <poll.h>
#include <time.h>
#include "panto.h"

// panto_step_events, and for a wait with a deadline the nanoseconds left until it (the
// deadline is CLOCK_MONOTONIC, which Go does not expose): one cgo call a step.
static int panto_go_step(PantoStream *stream, PantoEvent *events, size_t capacity, size_t *count,
                         PantoString *strings, PantoWait *wait, int64_t *left_ns) {
    wait->size = sizeof(PantoWait);
    int rc = panto_step_events(stream, events, capacity, count, strings, wait);
    if (rc == PANTO_WOULD_BLOCK && wait->deadline_ns >= 0) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        *left_ns = wait->deadline_ns - ((int64_t)now.tv_sec * 1000000000 + now.tv_nsec);
    }
    return rc;
}

// poll() of one descriptor (or none) for at most timeout_ms (-1: no limit), on the thread.
static void panto_go_poll(int fd, int write, int timeout_ms) {
    struct pollfd p = {.fd = fd, .events = write ? POLLOUT : POLLIN};
    poll(&p, fd >= 0 ? 1 : 0, timeout_ms);
}
*/
import "C"

import "time"

// How a stream's native calls read: decided by the first one.
const (
	readUndecided = iota
	readStepped   // panto_step_events, waiting in the netpoller between steps
	readBlocking  // panto_next_events: stepping was refused (no fibers on this platform)
)

// readBatch reads the next batch of the stream into evs: by steps, each wait parked in Go's
// netpoller (poller), so that a waiting stream holds no OS thread; or, when the library
// refuses to step the stream (PANTO_ERR_STATE on the first step: not Linux on x86_64 or
// aarch64), by the blocking call. It returns what panto_next_events would.
// agent.call must be held, and inCall set: a cancel (Cancel, the context, Close) interrupts
// the wait, and the next step ends the turn as canceled. agent.call is let go while the
// goroutine waits between two steps: no native call runs then, so the agent's other methods
// (Conversation, Settings, Connections, a tool's SubmitToolResult) answer at once instead of
// waiting for the provider; close waits for inCall instead (streamCore.close).
func (st *streamCore) readBatch(native *C.PantoStream, evs []C.PantoEvent) (rc C.int, n C.size_t, block C.PantoString) {
	for st.mode != readBlocking {
		var wait C.PantoWait
		var left C.int64_t
		rc = C.panto_go_step(native, &evs[0], C.size_t(len(evs)), &n, &block, &wait, &left)
		if rc == C.PANTO_ERR_STATE && st.mode == readUndecided {
			st.mode = readBlocking
			break
		}
		st.mode = readStepped
		if rc != C.PANTO_WOULD_BLOCK {
			return rc, n, block
		}
		timeout := time.Duration(max(left, 0))
		st.agent.call.Unlock()
		err := st.wait.wait(int(wait.fd), wait.events&C.PANTO_WAIT_WRITE != 0, timeout, wait.deadline_ns >= 0)
		st.agent.call.Lock()
		if err != nil {
			// The reactor refused the wait (no descriptor left for its epoll instance, or
			// epoll_ctl failed): a stepped turn cannot go on by blocking calls, so this
			// wait is a poll() on the thread.
			st.blockUntil(int(wait.fd), wait.events&C.PANTO_WAIT_WRITE != 0, timeout, wait.deadline_ns >= 0)
		}
	}
	rc = C.panto_next_events(native, &evs[0], C.size_t(len(evs)), &n, &block)
	return rc, n, block
}

// blockUntil waits for what a step asked for on the goroutine's thread, by poll(): only
// when the netpoller cannot take the wait.
func (st *streamCore) blockUntil(fd int, write bool, timeout time.Duration, hasTimeout bool) {
	ms := C.int(-1)
	if hasTimeout {
		ms = C.int(min((timeout+time.Millisecond-1)/time.Millisecond, 1<<30))
	}
	w := C.int(0)
	if write {
		w = 1
	}
	C.panto_go_poll(C.int(fd), w, ms)
}
