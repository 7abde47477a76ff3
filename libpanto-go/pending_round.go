package panto

/*
#include "panto.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"unsafe"
)

// PendingState says where a call of a pending round is.
type PendingState int

const (
	// PendingAsk: the call waits for a person's answer.
	PendingAsk PendingState = C.PANTO_PENDING_ASK
	// PendingToRun: it has its answer (or needed none) and was not run: it runs when the turn
	// is resumed.
	PendingToRun PendingState = C.PANTO_PENDING_TO_RUN
	// PendingStarted: it was handed to its runner and left no result (the process ended
	// while it ran). It is never run again: resuming answers it "The process ended before
	// this call finished."
	PendingStarted PendingState = C.PANTO_PENDING_STARTED
	// PendingAnswered: it has its result (it ran, was denied, or panto answered it).
	PendingAnswered PendingState = C.PANTO_PENDING_ANSWERED
)

func (s PendingState) String() string {
	switch s {
	case PendingAsk:
		return "ask"
	case PendingToRun:
		return "to_run"
	case PendingStarted:
		return "started"
	case PendingAnswered:
		return "answered"
	}
	return "unknown"
}

// PendingCall is a call of the tool round an agent holds, left waiting for a person.
type PendingCall struct {
	ID    string
	Name  string
	Input json.RawMessage // a JSON object
	State PendingState
}

// PendingRound lists the calls of the tool round the agent holds, in call order (nil when
// none waits). A stream closed or canceled while a call waited for its answer (Err matching
// ErrApprovalPending) leaves one, and so does a session whose process ended during a round
// (killed, say): an agent opening that session, in any process or language, has it too.
// ResumeTurn goes on with it; the next Run (or Continue, Compact) first answers every call
// left with an error result saying why (not approved, not run, or the process ended), so no
// request carries a call without its result. ErrBusy while a stream of the agent is
// unfinished.
func (a *Agent) PendingRound() ([]PendingCall, error) {
	var calls []PendingCall
	err := a.c.do(func(native *C.PantoAgent) C.int {
		var ptr *C.PantoPendingCall
		var count C.size_t
		rc := C.panto_agent_pending_round(native, &ptr, &count)
		if rc < 0 || count == 0 {
			return rc
		}
		for _, c := range unsafe.Slice(ptr, int(count)) {
			calls = append(calls, PendingCall{
				ID:    goString(c.id),
				Name:  goString(c.name),
				Input: json.RawMessage(goString(c.input)),
				State: PendingState(c.state),
			})
		}
		return rc
	})
	return calls, err
}

// ResumeTurn returns the stream that goes on with the round PendingRound lists: an
// EventApprovalRequest for the calls still asked about (answer them with Approve or Deny),
// an EventToolCallStart for each other call (those answered already are not run again: their
// results come with the round's EventToolResults; one that had started gets "The process
// ended before this call finished."), then the turn goes on as any. Closed again while a
// call waits, the stream leaves the round pending again. Options as Run's. It fails with
// ErrState when no round waits.
func (a *Agent) ResumeTurn(ctx context.Context, opts ...RunOption) (*Stream, error) {
	o, err := collectRunOptions(opts)
	if err != nil {
		return nil, err
	}
	return a.startStream(ctx, o.manual, func(native *C.PantoAgent, out **C.PantoStream) C.int {
		return C.panto_agent_resume(native, pantoBytes(o.options), out)
	})
}
