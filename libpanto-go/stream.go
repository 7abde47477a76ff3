package panto

/*
#include "panto.h"

// PANTO_EVENT_INIT as a function, so the binding follows the header's initialiser.
static PantoEvent panto_go_event_init(void) { PantoEvent e = PANTO_EVENT_INIT; return e; }
*/
import "C"

import (
	"context"
	"fmt"
	"runtime"
	"sync"
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
// the assistant message is part of the conversation. After a failure, a cancellation or a
// Close before the end, Next returns false and Err is not nil; later calls give the same.
type Stream struct {
	agent *Agent // keeps the agent alive: its native streams must be freed first
	h     *handle
	ctx   context.Context

	mu   sync.Mutex // serializes Next and guards the fields below
	cur  Event
	done bool
	err  error

	cleanup runtime.Cleanup
}

// Next reads the next event of the turn, waiting for the provider as needed. It returns
// false when the turn is over or failed; Err tells which.
func (s *Stream) Next() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur = Event{}
	if s.done || s.err != nil {
		return false
	}
	c, h := s.agent.c, s.h
	if s.ctx.Err() != nil {
		s.err = contextError(s.ctx)
		c.closeStream(h)
		return false
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
	case rc < 0:
		s.err = streamError(h.native, rc)
	default:
		s.err = fmt.Errorf("panto: panto_next_event returned the unexpected status %d", int(rc))
	}

	c.mu.Lock()
	h.busy = false
	if h.closed && s.err == nil && !s.done { // closed while the call ran
		s.cur = Event{}
		s.err = ErrClosed
	}
	if s.err != nil || s.done { // over: free the native stream now, not at Close
		h.closed = true
		c.pending = append(c.pending, h)
	}
	c.mu.Unlock()
	c.unlock()
	return rc == C.PANTO_EVENT && s.err == nil
}

// Event is the event the last Next read; the zero Event once Next returned false.
func (s *Stream) Event() Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// Err is nil while the turn runs and after it ended normally. Otherwise it is the failure:
// an *Error (errors.Is(err, ErrAuthentication), ...), one that also matches ctx.Err() for
// a canceled context, or ErrClosed when Next was called after Close.
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
