package main

import (
	"context"
	"errors"
	"runtime"
	"time"

	"panto.dev/panto"
)

// runTurnEndingEarly prints the lines of a turn that ends early the way e says
// (tests/conformance/README.md, "end_early"); false stops the case.
func runTurnEndingEarly(agent *panto.Agent, tn turn, e endEarly, extra int, emit func(map[string]any)) bool {
	switch {
	case e.CloseAfterDeltas != nil:
		return closeAfterDeltas(agent, tn, *e.CloseAfterDeltas, extra, emit)
	case e.DropAfterDeltas != nil:
		if !readAndDrop(agent, tn, *e.DropAfterDeltas, extra, emit) {
			return true
		}
		emit(map[string]any{"event": "dropped"})
		waitCollected(agent)
		return true
	case e.FreeBlockedAfterMs != nil:
		return closeFromTimer(agent, tn, time.Duration(*e.FreeBlockedAfterMs)*time.Millisecond, emit)
	}
	die(`"end_early" names none of close_after_deltas, drop_after_deltas, free_blocked_after_ms`)
	return false
}

// closeAfterDeltas iterates with Iter and closes the stream after the k-th content delta.
func closeAfterDeltas(agent *panto.Agent, tn turn, k, extra int, emit func(map[string]any)) bool {
	stream, err := tn.run(context.Background(), agent)
	if err != nil {
		emit(errorLine(err))
		return false
	}
	deltas := 0
	for ev := range stream.Iter {
		emit(eventLine(ev))
		if ev.Kind == panto.EventContentDelta {
			deltas++
		}
		if deltas == k {
			stream.Close()
			emit(map[string]any{"event": "closed"})
			return true
		}
	}
	endTurn(stream, extra, emit) // the turn ended before its k-th delta
	return true
}

// readAndDrop reads the turn with Next up to the k-th content delta, then forgets the
// stream without closing it; true when it got there.
func readAndDrop(agent *panto.Agent, tn turn, k, extra int, emit func(map[string]any)) bool {
	stream, err := tn.run(context.Background(), agent)
	if err != nil {
		emit(errorLine(err))
		return false
	}
	for deltas := 0; deltas < k; {
		if !stream.Next() {
			endTurn(stream, extra, emit)
			stream.Close()
			return false
		}
		ev := stream.Event()
		emit(eventLine(ev))
		if ev.Kind == panto.EventContentDelta {
			deltas++
		}
	}
	return true
}

// waitCollected runs the collector until the dropped stream is freed: until the agent,
// which refuses a change while a stream of it is unfinished, takes an empty one.
func waitCollected(agent *panto.Agent) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		if err := agent.SetConfigJSON([]byte("{}")); !errors.Is(err, panto.ErrBusy) {
			return
		}
		if time.Now().After(deadline) {
			die("the dropped stream was not collected within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// closeFromTimer iterates with Iter while a timer closes the stream after `after`, from
// another goroutine, as Next waits.
func closeFromTimer(agent *panto.Agent, tn turn, after time.Duration, emit func(map[string]any)) bool {
	stream, err := tn.run(context.Background(), agent)
	if err != nil {
		emit(errorLine(err))
		return false
	}
	timer := time.AfterFunc(after, func() { stream.Close() })
	defer timer.Stop()
	for ev := range stream.Iter {
		emit(eventLine(ev))
	}
	emit(endLine(stream)) // the stream is gone: no extra Next
	return true
}

// endTurn prints the end of a turn that Next left, and the extra Next calls' lines.
func endTurn(stream *panto.Stream, extra int, emit func(map[string]any)) {
	emit(endLine(stream))
	extraNext(stream, extra, emit)
}
