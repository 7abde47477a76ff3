package panto

import (
	"context"
	"time"
)

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
//
// The goroutine reads on as soon as the consumer received an event, so the data of a
// ToolResult's parts (PartInfo.Data), which the library lends only until then, is copied
// before the event is delivered.
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
			if ok {
				ev.keepData() // the goroutine reads on while the consumer looks at ev
			}
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
