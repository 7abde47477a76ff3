package panto

/*
#include <stdlib.h>
#include "panto.h"

// PANTO_EVENT_INIT as a function, so the binding follows the header's initialiser.
static PantoEvent panto_go_event_init(void) { PantoEvent e = PANTO_EVENT_INIT; return e; }
*/
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Stream is the answer of one turn, read event by event:
//
//	for stream.Next() {
//		ev := stream.Event()
//		...
//	}
//	if err := stream.Err(); err != nil { ... }
//
// or with range over Iter, which closes the stream when the loop ends, by break too, or
// over the channel of Events, which reads on a goroutine until the turn ends, ctx is done
// or the stream is closed. Next reads from the library in batches (panto_next_events: all
// that has arrived, up to 64 events a cgo call) and hands them out one by one.
//
// The turn ends after an EventMessageComplete: Next then returns false and Err nil, and
// the assistant messages are part of the conversation. After a failure, a cancellation or
// a Close before the end, Next returns false and Err is not nil; later calls give the same.
// A turn that failed at the provider-open boundary (an HTTP error answer, a connection
// that failed before the message began) can be run again with Reopen, typically after
// Agent.SetConfig.
//
// # Cancellation
//
// When the Run context is done, or Cancel is called, a Next waiting for the provider
// returns false at once (a watcher registered with context.AfterFunc for the length of each
// native call cancels it; nothing outlives the call). Err then matches ctx.Err() and
// ErrCanceled (ErrTimeout for a deadline), or only ErrCanceled after Cancel. The message
// the model was writing stays in the conversation, as far as it arrived, with the stop
// reason StopAborted; tool calls of the turn that had no result get a "canceled" one. The
// agent can then run the next turn.
//
// # Tools
//
// When the model calls a host tool, Next yields an EventToolCallStart with AwaitingResult.
// If the agent has the tool with a Handler and the turn is not manual (WithManualTools),
// the next call to Next runs the Handler (with the Run context, on the caller's goroutine)
// and gives its result to the library before reading on; the program just iterates, and
// sees the result in the EventToolResult that follows. Otherwise the program runs the tool
// and calls SubmitToolResult before the next Next; a Next without it returns false with an
// Err matching ErrResultPending, which is not sticky: submit, then call Next again. (With
// Iter, submit inside the loop: the loop ending closes the stream.)
type Stream struct {
	agent  *Agent // keeps the agent alive: its native streams must be freed first
	h      *handle
	ctx    context.Context
	manual bool // WithManualTools: run no handler

	mu        sync.Mutex // serializes Next and Reopen and guards the fields below
	cur       Event
	done      bool
	err       error
	transient bool          // err is ErrResultPending: the next Next clears it
	closed    atomic.Bool   // Close was called
	closing   chan struct{} // closed by the first Close
	submitted chan struct{} // SubmitToolResult signals here (capacity 1), for Events
	canceled  atomic.Bool   // Cancel was called

	callMu sync.Mutex // guards auto
	auto   *autoCall  // the host tool call the next Next runs, if any

	// The events come in batches (panto_next_events: one native call for all that arrived,
	// up to len(evs)): evs[at:n] are the events of the last one that Next has still to hand
	// out, each copied into an Event only when handed out (a copied batch would hold 64
	// Events, 12 KB, in every stream that waits), their strings cut from strs, the copy of
	// the batch's string block, which began at base. Guarded by mu.
	evs  []C.PantoEvent
	n    int
	at   int
	strs string
	base uintptr

	cleanup runtime.Cleanup
}

// A stream's batch starts at minBatch events, doubles each time a native call fills it, up
// to maxBatch, and halves when one comes back at most a quarter full (the events arrive
// slower than they are read): a fast stream reads maxBatch events a call, while one that
// waits or trickles holds a small batch (maxBatch PantoEvents are 10.7 KB).
const (
	minBatch = 4
	maxBatch = 64
)

// autoCall is a tool call that Next runs with the tool's Handler.
type autoCall struct {
	id    string
	input string
	tool  Tool
	taken bool // SubmitToolResult gave its result: do not run it
}

// Next reads the next event of the turn, waiting for the provider as needed, and first
// runs the handler of the tool call the previous event announced, if any. It returns
// false when the turn is over or failed, or when a tool result is due; Err tells which.
func (s *Stream) Next() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next(s.ctx)
}

// next is Next with the context ctx (the Run context, or one derived from it). s.mu must
// be held.
func (s *Stream) next(ctx context.Context) bool {
	s.cur = Event{}
	if s.transient {
		s.err, s.transient = nil, false
	}
	if s.done || s.err != nil {
		return false
	}
	if s.closed.Load() { // run no handler for a closed stream
		s.dropBatch()
		s.err = ErrClosed
		return false
	}
	c, h := s.agent.c, s.h
	// The rest of the last batch first, unless the turn is being canceled: those events are
	// then given back to the library below, unseen, so that the message it keeps is what
	// the program saw. Unless the stream was freed meanwhile (Agent.Close): then ErrClosed.
	if s.at < s.n && ctx.Err() == nil && !s.canceled.Load() && !c.isFreed(h) {
		s.cur = copyEvent(&s.evs[s.at], s.str)
		s.at++
		return true
	}

	if call := s.takeAuto(); call != nil && ctx.Err() == nil {
		content, isError := runHandler(ctx, call.tool, call.input)
		// The C ABI takes NUL-terminated UTF-8: what cannot pass becomes U+FFFD.
		content = strings.ToValidUTF8(strings.ReplaceAll(content, "\x00", "\uFFFD"), "\uFFFD")
		if ctx.Err() == nil { // else the native call below cancels the turn
			err := s.submit(call.id, content, isError)
			s.callMu.Lock()
			taken := call.taken
			s.auto = nil
			s.callMu.Unlock()
			// A SubmitToolResult on another goroutine may have answered the call meanwhile.
			if err != nil && !(taken && errors.Is(err, ErrNoSuchCall)) {
				return s.fail(err)
			}
		}
	}

	c.lock()
	c.mu.Lock()
	if h.closed {
		c.mu.Unlock()
		c.unlock()
		s.dropBatch()
		s.err = ErrClosed
		return false
	}
	h.busy = true
	if unseen := s.n - s.at; unseen > 0 {
		C.panto_stream_unread(h.native, C.size_t(unseen))
	}
	if s.n > 0 {
		s.adaptBatch(s.n)
	}
	s.dropBatch()
	if ctx.Err() != nil {
		// Done before the call: the library ends the turn as it does for a cancellation
		// during one, keeping what arrived of the message.
		C.panto_stream_cancel(h.native)
	}
	c.mu.Unlock()

	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(fired)
		c.cancel(h)
	})
	if s.evs == nil {
		s.resizeBatch(minBatch)
	}
	var n C.size_t
	var block C.PantoString
	rc := C.panto_next_events(h.native, &s.evs[0], C.size_t(len(s.evs)), &n, &block)
	watched := !stop() // the watcher ran, or runs: wait for it, so nothing outlives the call
	if watched {
		<-fired
	}
	switch {
	case rc == C.PANTO_EVENT:
		s.n, s.strs, s.base = int(n), goString(block), uintptr(unsafe.Pointer(block.ptr))
		s.cur, s.at = copyEvent(&s.evs[0], s.str), 1
	case rc == C.PANTO_DONE:
		s.done = true
	case rc == C.PANTO_ERR_RESULT_PENDING:
		err := callError(h.native, rc)
		if err.Message == "" {
			err.Message = "a tool call awaits its result: call SubmitToolResult, then Next"
		}
		s.err, s.transient = err, true
	case rc == C.PANTO_ERR_CANCELED && ctx.Err() != nil:
		s.err = contextError(ctx)
	case rc < 0:
		s.err = streamError(h.native, rc)
	default:
		s.err = fmt.Errorf("panto: panto_next_events returned the unexpected status %d", int(rc))
	}

	c.mu.Lock()
	h.busy = false
	if h.closed && !s.done { // closed while the call ran
		s.cur = Event{}
		s.dropBatch()
		s.err, s.transient = ErrClosed, false
	}
	// Over: free the native stream now rather than at Close, unless Reopen may need it (a
	// failure other than a cancellation; the library tells whether it can be reopened). A
	// failure that raced with the context's cancel cannot be reopened either: the library
	// stream is canceled.
	failed := rc < 0 && rc != C.PANTO_ERR_RESULT_PENDING
	if !h.closed && (s.done || rc == C.PANTO_ERR_CANCELED || (watched && failed)) {
		h.closed = true
	}
	if h.closed {
		c.pending = append(c.pending, h)
	}
	c.mu.Unlock()
	c.unlock()

	if s.err == nil && s.cur.Kind == EventToolCallStart && s.cur.AwaitingResult && !s.manual {
		if t, ok := c.tool(s.cur.Name); ok && t.Handler != nil {
			s.callMu.Lock()
			s.auto = &autoCall{id: s.cur.ID, input: s.cur.Text, tool: t}
			s.callMu.Unlock()
		}
	}
	return rc == C.PANTO_EVENT && s.err == nil
}

// adaptBatch sizes the next native call's batch after one that returned n events.
func (s *Stream) adaptBatch(n int) {
	switch size := len(s.evs); {
	case n == size && size < maxBatch:
		s.resizeBatch(size * 2)
	case n <= size/4 && size > minBatch:
		s.resizeBatch(size / 2)
	}
}

// resizeBatch gives the native calls a batch of size events. The events of the last batch
// must have been handed out or given back.
func (s *Stream) resizeBatch(size int) {
	s.evs = make([]C.PantoEvent, size)
	s.evs[0] = C.panto_go_event_init() // its size is every element's
}

// dropBatch forgets the events of the last batch that were not handed out.
func (s *Stream) dropBatch() {
	s.n, s.at, s.strs = 0, 0, ""
}

// str is a string of the last batch, cut from the copy of its string block.
func (s *Stream) str(p C.PantoString) string {
	if p.len == 0 {
		return ""
	}
	at := uintptr(unsafe.Pointer(p.ptr)) - s.base
	return s.strs[at : at+uintptr(p.len)]
}

// fail ends the turn with err and frees the native stream. s.mu must be held.
func (s *Stream) fail(err error) bool {
	s.cur, s.err, s.transient = Event{}, err, false
	s.dropBatch()
	s.agent.c.closeStream(s.h)
	return false
}

// Cancel cancels the turn; it may be called from any goroutine and does not wait. A Next
// waiting for the provider returns false at once, with an Err matching ErrCanceled (type
// "canceled_error"); a later Next does the same. What arrived of the message stays in the
// conversation with the stop reason StopAborted. Canceling twice, or a turn that is over,
// is harmless.
func (s *Stream) Cancel() {
	s.canceled.Store(true)
	s.agent.c.cancel(s.h)
}

// Reopen runs the turn again after it failed at the provider-open boundary (an HTTP error
// answer, or a connection failure before any event of the message), typically after
// Agent.SetConfig fixed what the provider refused: the user message is not added twice,
// and ctx becomes the turn's context. Then iterate with Next as before. (Iter closes the
// stream when its loop ends: use Next to keep a stream to reopen.)
//
// It returns an *Error matching ErrState when the stream did not fail that way (it runs,
// ended, was canceled, or failed after the message began), ErrBusy when another stream of
// the agent is unfinished, ErrClosed after Close, and ctx's error when ctx is done. The
// stream is unchanged when Reopen fails.
func (s *Stream) Reopen(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, h := s.agent.c, s.h
	if s.closed.Load() || c.isClosed() {
		return ErrClosed
	}
	switch {
	case s.done:
		return &Error{Code: ErrState, Message: "the turn ended normally: there is nothing to reopen"}
	case s.err == nil || s.transient:
		return &Error{Code: ErrState, Message: "the turn has not failed: only a failed turn can be reopened"}
	case s.canceled.Load():
		return &Error{Code: ErrState, Message: "the turn was canceled: it cannot be reopened"}
	}
	if err := ctx.Err(); err != nil {
		return contextError(ctx)
	}
	c.lock()
	defer c.unlock()
	c.mu.Lock()
	freed := h.closed
	c.mu.Unlock()
	if freed {
		if s.closed.Load() || c.isClosed() {
			return ErrClosed
		}
		return &Error{Code: ErrState, Message: "the turn was canceled, or failed in a way that cannot be reopened"}
	}
	switch rc := C.panto_stream_reopen(h.native); {
	case rc == C.PANTO_ERR_STATE:
		return &Error{Code: ErrState, Message: "the turn did not fail at the provider-open boundary " +
			"(an HTTP error answer or a failed connection before the message began): it cannot be reopened"}
	case rc == C.PANTO_ERR_BUSY:
		return &Error{Code: ErrBusy, Message: "another stream of the agent is unfinished: close it first"}
	case rc < 0:
		return &Error{Code: Code(rc), Message: "panto_stream_reopen failed"}
	}
	s.cur, s.err, s.transient, s.ctx = Event{}, nil, false, ctx
	s.dropBatch()
	return nil
}

// takeAuto is the call the previous event asks Next to run, unless SubmitToolResult
// answered it meanwhile. It stays in s.auto until its result is given.
func (s *Stream) takeAuto() *autoCall {
	s.callMu.Lock()
	defer s.callMu.Unlock()
	if s.auto != nil && s.auto.taken {
		s.auto = nil
	}
	return s.auto
}

// runHandler runs a tool's handler; an error or a panic gives a failed result.
func runHandler(ctx context.Context, t Tool, input string) (content string, isError bool) {
	defer func() {
		if r := recover(); r != nil {
			content, isError = fmt.Sprintf("panic: %v", r), true
		}
	}()
	out, err := t.Handler(ctx, json.RawMessage(input))
	if err != nil {
		return err.Error(), true
	}
	return out, false
}

// SubmitToolResult gives the result of the tool call id, announced by an
// EventToolCallStart with AwaitingResult, to the model: content is what it reads, isError
// marks a failure (the turn goes on). It returns an error matching ErrNoSuchCall when no
// call with that id awaits a result, ErrClosed after the turn ended or was closed, and
// ErrInvalidArgument for a NUL byte in id or content.
//
// Call it before the next Next. It may also answer a call the stream would run itself
// (a tool with a Handler): the Handler then does not run.
func (s *Stream) SubmitToolResult(id, content string, isError bool) error {
	if strings.IndexByte(id, 0) >= 0 || strings.IndexByte(content, 0) >= 0 {
		return &Error{Code: ErrInvalidArgument, Message: "the tool call id or result holds a NUL byte"}
	}
	if err := s.submit(id, content, isError); err != nil {
		return err
	}
	s.callMu.Lock()
	if s.auto != nil && s.auto.id == id {
		s.auto.taken = true
	}
	s.callMu.Unlock()
	select { // wakes the goroutine of Events waiting for the result
	case s.submitted <- struct{}{}:
	default:
	}
	return nil
}

// submit passes a tool result to the library.
func (s *Stream) submit(id, content string, isError bool) error {
	cid := C.CString(id)
	defer C.free(unsafe.Pointer(cid))
	ccontent := C.CString(content)
	defer C.free(unsafe.Pointer(ccontent))
	flag := C.int(0)
	if isError {
		flag = 1
	}
	c, h := s.agent.c, s.h
	c.lock()
	defer c.unlock()
	c.mu.Lock()
	closed := h.closed || h.native == nil
	c.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if rc := C.panto_stream_submit_tool_result(h.native, cid, ccontent, flag); rc < 0 {
		err := callError(h.native, rc)
		if err.Message == "" && rc == C.PANTO_ERR_NO_SUCH_CALL {
			err.Message = fmt.Sprintf("no tool call with id %q awaits a result", id)
		}
		return err
	}
	return nil
}

// Event is the event the last Next read; the zero Event once Next returned false.
func (s *Stream) Event() Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// Err is nil while the turn runs and after it ended normally. Otherwise it is the failure:
// an *Error (errors.Is(err, ErrAuthentication), ...; ErrTimeout for Config.Timeouts,
// ErrCanceled after Cancel), one that also matches ctx.Err() when the Run context ended
// the turn, or ErrClosed when Close ended it or Next was called after Close. After a Next
// that stopped for a due tool result it matches ErrResultPending, until the next Next; after
// a successful Reopen it is nil again.
func (s *Stream) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Iter yields the events of the turn; use it as `for ev := range stream.Iter`. The stream
// is closed when the loop ends, a break included. Check Err afterwards.
func (s *Stream) Iter(yield func(Event) bool) {
	defer s.Close()
	for s.Next() {
		if !yield(s.Event()) {
			return
		}
	}
}

// Events delivers the events of the turn on a channel, from a goroutine that reads them
// with Next, and closes the channel when the turn is over; Err then tells why it ended.
// Tool calls with a Handler run on that goroutine, as with Next, with a context done when
// the Run context or ctx is. The stream is closed when the goroutine exits.
//
//	for ev := range stream.Events(ctx) {
//		...
//	}
//	if err := stream.Err(); err != nil { ... }
//
// The consumer may stop reading at any time: it then cancels ctx or calls Close, and the
// goroutine cancels the turn (what arrived of the message stays in the conversation,
// StopAborted) and exits; its native call does not outlive the cancellation. Err then
// matches ctx.Err() and ErrCanceled (ErrTimeout for a deadline), or ErrClosed after Close.
// A consumer that stops reading without either leaves the goroutine blocked, holding the
// turn's connection, until the Run context is done.
//
// A tool call that awaits a result the program gives (WithManualTools, or a tool without a
// Handler) is delivered too; the goroutine then waits for SubmitToolResult (or ctx, or
// Close) before reading on. Call Events once, and no Next, Iter or Reopen meanwhile.
func (s *Stream) Events(ctx context.Context) <-chan Event {
	if ctx == nil {
		ctx = context.Background()
	}
	s.mu.Lock()
	run := s.ctx
	s.mu.Unlock()
	inner, cancel := context.WithCancelCause(run)
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	mctx := &eventsContext{Context: inner, run: run, consumer: ctx}

	ch := make(chan Event)
	go func() {
		defer close(ch)
		defer s.Close()
		defer cancel(nil)
		defer stop()
		for {
			s.mu.Lock()
			ok := s.next(mctx)
			ev, pending := s.cur, s.transient
			s.mu.Unlock()
			if !ok {
				if !pending {
					return
				}
				select { // a tool result is due: wait for SubmitToolResult
				case <-s.submitted:
					continue
				case <-mctx.Done():
				case <-s.closing:
				}
			} else {
				select {
				case ch <- ev:
					continue
				case <-mctx.Done():
				case <-s.closing:
				}
			}
			// The consumer is gone: end the turn. The context being done, next cancels
			// it; after Close it records ErrClosed.
			s.mu.Lock()
			s.next(mctx)
			s.mu.Unlock()
			return
		}
	}()
	return ch
}

// eventsContext is the context of the Events goroutine: the Run context, also done when
// the consumer's context is. Its Err is the error of the one that ended it, so that Err
// tells a deadline from a cancellation.
type eventsContext struct {
	context.Context // canceled with the consumer's context, child of run
	run, consumer   context.Context
}

func (m *eventsContext) Deadline() (time.Time, bool) {
	d, ok := m.run.Deadline()
	if cd, cok := m.consumer.Deadline(); cok && (!ok || cd.Before(d)) {
		d, ok = cd, true
	}
	return d, ok
}

func (m *eventsContext) Err() error {
	err := m.Context.Err()
	if err == nil {
		return nil
	}
	if rerr := m.run.Err(); rerr != nil {
		return rerr
	}
	if cerr := m.consumer.Err(); cerr != nil {
		return cerr
	}
	return err
}

// Close frees the stream, closing its connection. A turn closed between two Next calls
// before it ended adds no assistant message. Close is idempotent, does not wait, and is
// safe while Next runs on another goroutine: it cancels that Next (as Cancel does, so what
// arrived of the message stays in the conversation, StopAborted), which returns false at
// once with Err ErrClosed; the native stream is freed when it has returned.
func (s *Stream) Close() error {
	if !s.closed.Swap(true) {
		close(s.closing)
	}
	s.cleanup.Stop()
	s.agent.c.closeStream(s.h)
	return nil
}
