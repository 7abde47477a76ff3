package panto

/*
#include "panto.h"
*/
import "C"

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
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
// or the stream is closed. Next reads from the library in batches (all that has arrived,
// up to 64 events a cgo call) and hands them out one by one. While it waits for the
// provider, the goroutine is parked in Go's network poller, not in a cgo call: a waiting
// stream holds no OS thread (see readBatch).
//
// The turn ends after an EventMessageComplete: Next then returns false and Err nil, and
// the assistant messages are part of the conversation. After a failure, a cancellation or
// a Close before the end, Next returns false and Err is not nil; later calls give the same.
// Close (Iter's too) or the cleanup of a forgotten stream ends an unfinished turn as a
// cancellation does, and the conversation keeps exactly the events Next handed out.
// A turn that failed at the provider-open boundary (an HTTP error answer, a connection
// that failed before the message began) can be run again with Reopen, typically after
// Agent.SetConfig.
//
// # Cancellation
//
// When the Run context is done, or Cancel is called, a Next waiting for the provider
// returns false at once (a watcher registered with context.AfterFunc for the length of each
// read cancels it and ends its wait; nothing outlives the read). Err then matches ctx.Err() and
// ErrCanceled (ErrTimeout for a deadline), or only ErrCanceled after Cancel. The message
// the model was writing stays in the conversation, as far as it arrived, with the stop
// reason StopAborted; tool calls of the turn that had no result get a "canceled" one. The
// agent can then run the next turn.
//
// # Tools
//
// When the model calls a host tool, Next yields an EventToolCallStart with AwaitingResult.
// If the agent has the tool with a Handler (or a PartsHandler) and the turn is not manual
// (WithManualTools), the stream runs it: once the EventToolCallStarts of the message were
// all read, Next starts their handlers, each on a goroutine of its own, all at once but the
// Sequential ones (Event.Sequential: they run alone), with a context derived from the Run
// context that is canceled when the turn ends; it gives the library each result as it comes
// and each ReportProgress as an EventToolProgress, while the program just iterates, and sees
// the results in the EventToolResults that follow, in call order. Otherwise the program
// runs the tool and calls SubmitToolResult (or SubmitToolResultParts) before the next Next;
// a Next without it returns false with an Err matching ErrResultPending, which is not
// sticky: submit, then call Next again. (With Iter, submit inside the loop: the loop ending
// closes the stream.)
type Stream struct {
	agent  *Agent // keeps the agent alive while the stream is used
	st     *streamCore
	manual bool // WithManualTools: run no handler

	mu        sync.Mutex // serializes Next, Reopen and the Events goroutine; guards the fields below
	ctx       context.Context
	cur       Event
	done      bool
	err       error
	transient bool      // err is ErrResultPending or ErrApprovalPending: the next Next clears it
	asked     approvals // the calls an EventApprovalRequest listed, not answered yet

	closeOnce sync.Once
	closing   chan struct{} // closed by the first Close
	submitted chan struct{} // SubmitToolResult signals here (capacity 1), for Events
	canceled  atomic.Bool   // Cancel was called

	cancelOnce sync.Once
	cancelCh   chan struct{} // closed by the first Cancel

	tools *toolRunner // the host tool calls the stream runs
	final finalState  // what the final helpers need, gathered as events are handed out

	cleanup runtime.Cleanup
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
	st := s.st
	// The rest of the last batch first, unless the turn is being canceled: those events are
	// then given back to the library below, unseen, so that the message it keeps is what
	// the program saw.
	if ctx.Err() == nil && !s.canceled.Load() {
		ev, ok, closed := st.take()
		if closed {
			s.err = errClosedTurn()
			return false
		}
		if ok {
			s.cur = ev
			s.final.see(ev)
			s.noteApprovals()
			return true
		}
	}

	ok := s.readWithTools(ctx)
	if ok {
		s.final.see(s.cur)
		s.noteApprovals()
	} else if !s.transient {
		s.tools.end() // the turn is over
	}
	return ok
}

// readWithTools hands the library what the host tools gave (progress, results) before each
// read. Once the library waits for the results of the round (its ToolCallStarts were all
// read), it starts the calls that may start and waits for what they give (or for the end
// of the turn). s.mu must be held.
func (s *Stream) readWithTools(ctx context.Context) bool {
	for {
		if ctx.Err() == nil && !s.canceled.Load() {
			if err := s.forwardTools(); err != nil {
				return s.fail(err)
			}
		}
		ok := s.read(ctx)
		if !ok && isApprovalPending(s.err) && s.st.agent.approve != nil && len(s.asked) > 0 {
			if err := s.decideApprovals(ctx); err != nil {
				return s.fail(err)
			}
			s.err, s.transient = nil, false
			continue
		}
		if ok || !s.transient || !s.tools.pending() || isApprovalPending(s.err) {
			return ok
		}
		s.tools.launch(ctx)
		select { // a result is due from a handler that runs: wait for it
		case <-s.tools.wake:
		case <-ctx.Done():
		case <-s.closing:
		case <-s.cancelCh:
		}
		s.err, s.transient = nil, false
	}
}

// read reads the next batch (readBatch: by steps, waiting in the netpoller) and hands out
// its first event. s.mu must be held.
func (s *Stream) read(ctx context.Context) bool {
	st := s.st
	st.agent.call.Lock()
	defer st.agent.call.Unlock()
	st.mu.Lock()
	if st.closed || st.native == nil { // closed meanwhile: Close frees it
		st.mu.Unlock()
		s.err = errClosedTurn()
		return false
	}
	if st.evs == nil || st.n > 0 {
		st.adaptBatch(st.n)
	}
	st.endLending()
	st.giveBack()
	if ctx.Err() != nil {
		// Done before the call: the library ends the turn as it does for a cancellation
		// during one, keeping what arrived of the message.
		C.panto_stream_cancel(st.native)
	}
	st.inCall = true
	st.callDone = make(chan struct{})
	native, evs := st.native, st.evs
	st.mu.Unlock()

	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(fired)
		st.cancel()
	})
	rc, n, block := st.readBatch(native, evs)
	watched := !stop() // the watcher ran, or runs: wait for it, so nothing outlives the call
	if watched {
		<-fired
	}

	st.mu.Lock()
	defer st.mu.Unlock()
	st.inCall = false
	close(st.callDone)
	if rc == C.PANTO_EVENT {
		st.fill(n, block)
	}
	switch {
	case st.closed: // by Close on another goroutine, which left the free to this call
		s.err = errClosedTurn()
	case rc == C.PANTO_EVENT:
		s.cur, st.at = st.event(&st.evs[0]), 1
	case rc == C.PANTO_DONE:
		s.done = true
	case rc == C.PANTO_ERR_RESULT_PENDING:
		err := streamError(native, rc)
		if err.Message == "" {
			err.Message = "a tool call awaits its result: call SubmitToolResult, then Next"
		}
		s.err, s.transient = err, true
	case rc == C.PANTO_ERR_APPROVAL_PENDING:
		err := streamError(native, rc)
		if err.Message == "" {
			err.Message = "a tool call waits for its approval: call Approve or Deny for each of Approvals, then Next"
		}
		s.err, s.transient = err, true
	case rc == C.PANTO_ERR_CANCELED && ctx.Err() != nil:
		s.err = contextError(ctx)
	case rc < 0:
		s.err = streamError(native, rc)
	default:
		s.err = fmt.Errorf("panto: panto_next_events returned the unexpected status %d", int(rc))
	}
	// Over: free the native stream now rather than at Close, unless Reopen may need it (a
	// failure other than a cancellation; the library tells whether it can be reopened). A
	// failure that raced with the context's cancel cannot be reopened either: the library
	// stream is canceled.
	failed := rc < 0 && rc != C.PANTO_ERR_RESULT_PENDING && rc != C.PANTO_ERR_APPROVAL_PENDING
	if s.done && !st.closed {
		s.final.fetchJSON(native)
	}
	if st.closed || s.done || rc == C.PANTO_ERR_CANCELED || (watched && failed) {
		st.release()
	}
	if s.err != nil {
		s.cur = Event{}
		return false
	}
	if s.cur.Kind == EventToolCallStart && s.cur.AwaitingResult && !s.manual {
		if t, ok := st.agent.tool(s.cur.Name); ok && t.hasHandler() {
			s.tools.add(s.cur.ID, s.cur.Text, t, s.cur.Sequential)
		}
	}
	return rc == C.PANTO_EVENT
}

// fail ends the turn with err and frees the native stream. s.mu must be held.
func (s *Stream) fail(err error) bool {
	s.cur, s.err, s.transient = Event{}, err, false
	s.tools.end()
	s.st.close()
	return false
}

// Cancel cancels the turn; it may be called from any goroutine and does not wait. A Next
// waiting for the provider returns false at once, with an Err matching ErrCanceled (type
// "canceled_error"); a later Next does the same. What arrived of the message stays in the
// conversation with the stop reason StopAborted. Canceling twice, or a turn that is over,
// is harmless.
func (s *Stream) Cancel() {
	s.canceled.Store(true)
	s.st.cancel() // first: a Next that sees the tools end then sees the turn canceled
	s.tools.end()
	s.cancelOnce.Do(func() { close(s.cancelCh) })
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
	st := s.st
	st.agent.call.Lock()
	defer st.agent.call.Unlock()
	st.mu.Lock()
	defer st.mu.Unlock()
	switch {
	case st.closed:
		return ErrClosed
	case s.done:
		return &Error{Code: ErrState, Message: "the turn ended normally: there is nothing to reopen"}
	case s.err == nil || s.transient:
		return &Error{Code: ErrState, Message: "the turn has not failed: only a failed turn can be reopened"}
	case s.canceled.Load() || st.native == nil:
		return &Error{Code: ErrState, Message: "the turn was canceled, or failed in a way that cannot be reopened"}
	case ctx.Err() != nil:
		return contextError(ctx)
	}
	st.endLending()
	if rc := C.panto_stream_reopen(st.native); rc < 0 {
		return streamError(st.native, rc)
	}
	s.cur, s.err, s.transient, s.ctx = Event{}, nil, false, ctx
	s.tools.restart()
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
// the turn, or one matching ErrCanceled and ErrClosed when Close ended it (from another
// goroutine, or before this Next). After a Next that stopped for a due tool result it
// matches ErrResultPending, until the next Next; after a successful Reopen it is nil again.
func (s *Stream) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Iter yields the events of the turn; use it as `for ev := range stream.Iter`. The stream
// is closed when the loop ends, a break included. Check Err afterwards.
func (s *Stream) Iter(yield func(Event) bool) {
	defer s.Close()
	for {
		s.mu.Lock()
		ok := s.next(s.ctx)
		ev := s.cur
		s.mu.Unlock()
		if !ok || !yield(ev) {
			return
		}
	}
}

// Close closes the stream; it is idempotent and safe from any goroutine. A turn that is
// not over ends as a cancellation ends it: what the program read of the message stays in
// the conversation with the stop reason StopAborted (the events read ahead of it are given
// back first), and the agent can run the next turn. A Next waiting for the provider on
// another goroutine returns false at once, with an Err matching ErrCanceled and ErrClosed;
// Close returns once it has, the stream freed, so that the agent can run the next turn.
func (s *Stream) Close() error {
	s.closeOnce.Do(func() { close(s.closing) })
	s.cleanup.Stop()
	s.st.close() // first: a Next that sees the tools end then sees the stream closed
	s.tools.end()
	return nil
}
