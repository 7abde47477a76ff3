package panto

/*
#include "panto.h"

// PANTO_EVENT_INIT as a function, so the binding follows the header's initialiser.
static PantoEvent panto_go_event_init(void) { PantoEvent e = PANTO_EVENT_INIT; return e; }
*/
import "C"

import (
	"sync"
	"unsafe"
)

// streamCore is a native stream and the batch of events read ahead of the program: what
// closing the stream needs. The Stream's cleanup references it, not the Stream, so that an
// unreachable Stream can be collected.
//
// Closing is the library's close policy (include/panto.h): the turn ends as canceled, and
// the conversation keeps what the program saw. The events of the batch the program did not
// see are given back (panto_stream_unread), then the stream is freed. A stream whose Next
// is in panto_next_events on another goroutine is canceled instead, and that Next frees it
// when the call returns: only that goroutine knows when the call is over (freeing from here
// could come just before the call starts, which the library cannot tell from a use after
// free) and which events it received.
type streamCore struct {
	agent *agentCore

	mu     sync.Mutex     // guards the fields below; held by no call that waits for the provider
	native *C.PantoStream // nil once freed
	inCall bool           // a read of it runs (readBatch), without mu
	// callDone is closed when the read that set inCall ends (under mu): close waits for it,
	// as agent.call is let go while a stepped read waits.
	callDone chan struct{}
	closed   bool // Close was called: no more events are handed out

	mode int    // how readBatch reads (readStepped, readBlocking); guarded by agent.call
	wait poller // where a stepped read waits between steps

	// The last batch (panto_next_events: one native call for all that arrived, up to
	// len(evs)): evs[at:n] are its events still to hand out, each copied into an Event only
	// when handed out (a copied batch would hold 64 Events, 12 KB, in every stream that
	// waits), their strings cut from strs, the copy of the batch's string block, which
	// began at base.
	evs  []C.PantoEvent
	n    int
	at   int
	strs string
	base uintptr

	// lent counts the calls that end what the library lends (the events and strings of the
	// last batch): a part's data read at another count is gone (partData).
	lent uint64
}

// A stream's batch starts at minBatch events, doubles each time a native call fills it, up
// to maxBatch, and halves when one comes back at most a quarter full (the events arrive
// slower than they are read): a fast stream reads maxBatch events a call, while one that
// waits or trickles holds a small batch (maxBatch PantoEvents are 10.7 KB).
const (
	minBatch = 4
	maxBatch = 64
)

// take hands out the next event of the batch, if there is one and the stream is open.
func (st *streamCore) take() (ev Event, ok, closed bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return Event{}, false, true
	}
	if st.at >= st.n {
		return Event{}, false, false
	}
	ev = st.event(&st.evs[st.at])
	st.at++
	return ev, true, false
}

// str is a string of the last batch, cut from the copy of its string block, or copied on
// its own when the block was not copied or does not hold it.
func (st *streamCore) str(p C.PantoString) string {
	if p.len == 0 {
		return ""
	}
	at := uintptr(unsafe.Pointer(p.ptr)) - st.base
	if end := at + uintptr(p.len); at < end && end <= uintptr(len(st.strs)) {
		return st.strs[at:end]
	}
	return goString(p)
}

// fill records the batch a native call returned, n events and their string block. The block
// of a tool result with parts is not copied, as it may hold their data (base64 images):
// its few other strings are copied one by one, the data only when asked for (partData).
func (st *streamCore) fill(n C.size_t, block C.PantoString) {
	st.n, st.at = int(n), 0
	if n == 1 && st.evs[0].kind == C.PANTO_EVENT_TOOL_RESULT && st.evs[0].part_count > 0 {
		st.strs, st.base = "", 0
		return
	}
	st.strs, st.base = goString(block), uintptr(unsafe.Pointer(block.ptr))
}

// call runs f, a native call that does not wait for the provider, on the stream with the
// locks it needs (it ends what the library lent); ErrClosed once the stream is closed.
func (st *streamCore) call(f func(native *C.PantoStream) error) error {
	st.agent.call.Lock()
	defer st.agent.call.Unlock()
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed || st.native == nil {
		return ErrClosed
	}
	st.endLending()
	return f(st.native)
}

// endLending records a call that ends what the library lent: the parts' data of the events
// handed out. mu must be held.
func (st *streamCore) endLending() { st.lent++ }

// adaptBatch sizes the next native call's batch after the last one, which returned n events.
func (st *streamCore) adaptBatch(n int) {
	switch size := len(st.evs); {
	case size == 0:
		st.resizeBatch(minBatch)
	case n == size && size < maxBatch:
		st.resizeBatch(size * 2)
	case n <= size/4 && size > minBatch:
		st.resizeBatch(size / 2)
	}
}

// resizeBatch gives the native calls a batch of size events. The events of the last batch
// must have been handed out or given back.
func (st *streamCore) resizeBatch(size int) {
	st.evs = make([]C.PantoEvent, size)
	st.evs[0] = C.panto_go_event_init() // its size is every element's
}

// giveBack gives the events of the batch not handed out back to the library, which then
// counts them as never read. agent.call and mu must be held.
func (st *streamCore) giveBack() {
	if unseen := st.n - st.at; unseen > 0 && st.native != nil {
		C.panto_stream_unread(st.native, C.size_t(unseen))
	}
	st.n, st.at, st.strs = 0, 0, ""
}

// release gives back the unseen events and frees the native stream: an unfinished turn
// ends by the close policy. agent.call and mu must be held, and no call of it run.
func (st *streamCore) release() {
	if st.native == nil {
		return
	}
	st.endLending()
	st.giveBack()
	C.panto_stream_free(st.native)
	st.native = nil
	st.agent.forget(st)
}

// streamParts is what the cleanup of a Stream closes.
type streamParts struct {
	st    *streamCore
	tools *toolRunner
}

// collectStream is the cleanup of an unreachable Stream: its tools' contexts are canceled,
// and the stream closed on a goroutine of its own (the close may wait for a native call of
// the agent, which must not hold up the runtime's cleanups).
func collectStream(p streamParts) {
	go func() {
		p.st.close()
		p.tools.end()
	}()
}

// cancel cancels the turn, unless the stream was freed; it may be called from any
// goroutine and does not wait for a running call (panto_stream_cancel is thread-safe).
func (st *streamCore) cancel() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.native != nil {
		st.cancelNative()
	}
}

// cancelNative cancels the native stream and ends a stepped read's wait, which then steps
// to the canceled end (the library also wakes the descriptor it waits on, but a wait for a
// deadline alone has none). mu must be held and native set.
func (st *streamCore) cancelNative() {
	C.panto_stream_cancel(st.native)
	st.wait.interrupt()
}

// close closes the stream: see streamCore. It is idempotent, and returns once the stream is
// freed: after the Next it canceled has returned, or another close has freed it.
func (st *streamCore) close() {
	st.mu.Lock()
	st.closed = true      // no call starts from now on
	if st.native == nil { // freed already (at the end of the turn)
		st.mu.Unlock()
		return
	}
	if st.inCall {
		st.cancelNative() // that Next frees the stream as its call returns
		done := st.callDone
		st.mu.Unlock()
		<-done // (agent.call may be free while it waits between steps: not a sign it ended)
	} else {
		st.mu.Unlock()
	}
	st.agent.call.Lock() // held by that Next until it returns, as by another close
	st.mu.Lock()
	st.release()
	st.mu.Unlock()
	st.agent.call.Unlock()
}
