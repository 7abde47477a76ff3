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
// or with range over Iter, which closes the stream when the loop ends, by break too.
//
// The turn ends after an EventMessageComplete: Next then returns false and Err nil, and
// the assistant messages are part of the conversation. After a failure, a cancellation or
// a Close before the end, Next returns false and Err is not nil; later calls give the same.
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

	mu        sync.Mutex // serializes Next and guards the fields below
	cur       Event
	done      bool
	err       error
	transient bool // err is ErrResultPending: the next Next clears it

	callMu sync.Mutex // guards auto
	auto   *autoCall  // the host tool call the next Next runs, if any

	cleanup runtime.Cleanup
}

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
	s.cur = Event{}
	if s.transient {
		s.err, s.transient = nil, false
	}
	if s.done || s.err != nil {
		return false
	}
	c, h := s.agent.c, s.h
	if s.ctx.Err() != nil {
		return s.fail(contextError(s.ctx))
	}

	if call := s.takeAuto(); call != nil {
		content, isError := runHandler(s.ctx, call.tool, call.input)
		// The C ABI takes NUL-terminated UTF-8: what cannot pass becomes U+FFFD.
		content = strings.ToValidUTF8(strings.ReplaceAll(content, "\x00", "\uFFFD"), "\uFFFD")
		if s.ctx.Err() != nil {
			return s.fail(contextError(s.ctx))
		}
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

	c.lock()
	c.mu.Lock()
	if h.closed {
		c.mu.Unlock()
		c.unlock()
		s.err = ErrClosed
		return false
	}
	h.busy = true
	c.mu.Unlock()

	ev := C.panto_go_event_init()
	rc := C.panto_next_event(h.native, &ev)
	switch {
	case rc == C.PANTO_EVENT:
		s.cur = copyEvent(&ev)
	case rc == C.PANTO_DONE:
		s.done = true
	case rc == C.PANTO_ERR_RESULT_PENDING:
		err := callError(h.native, rc)
		if err.Message == "" {
			err.Message = "a tool call awaits its result: call SubmitToolResult, then Next"
		}
		s.err, s.transient = err, true
	case rc < 0:
		s.err = streamError(h.native, rc)
	default:
		s.err = fmt.Errorf("panto: panto_next_event returned the unexpected status %d", int(rc))
	}

	c.mu.Lock()
	h.busy = false
	if h.closed && !s.done && (s.err == nil || s.transient) { // closed while the call ran
		s.cur = Event{}
		s.err, s.transient = ErrClosed, false
	}
	if (s.err != nil && !s.transient) || s.done { // over: free the native stream now, not at Close
		h.closed = true
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

// fail ends the turn with err and frees the native stream. s.mu must be held.
func (s *Stream) fail(err error) bool {
	s.cur, s.err, s.transient = Event{}, err, false
	s.agent.c.closeStream(s.h)
	return false
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
// an *Error (errors.Is(err, ErrAuthentication), ...), one that also matches ctx.Err() for
// a canceled context, or ErrClosed when Next was called after Close. After a Next that
// stopped for a due tool result it matches ErrResultPending, until the next Next.
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

// Close frees the stream, closing its connection. A turn closed before it ended adds no
// assistant message. Close is idempotent, and safe while Next runs on another goroutine:
// that Next then returns false with ErrClosed once its wait ends.
func (s *Stream) Close() error {
	s.cleanup.Stop()
	s.agent.c.closeStream(s.h)
	return nil
}
