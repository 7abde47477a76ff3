package panto

/*
#include "panto.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
)

// ApprovalCall is a tool call that waits for a person's answer: its tool says
// "approval": "always", or an approval rule of the config says "ask" (docs/tool-use.md).
type ApprovalCall struct {
	ID    string
	Name  string
	Input json.RawMessage // a JSON object
}

// Approvals is the calls of an EventApprovalRequest, in call order; nil for another kind.
// A new slice for each call.
func (e Event) Approvals() []ApprovalCall {
	if e.approvals == nil {
		return nil
	}
	return slices.Clone(*e.approvals)
}

// approvals is what a Stream keeps of its approval requests: the calls not answered yet.
type approvals []ApprovalCall

func (a *approvals) drop(id string) {
	*a = slices.DeleteFunc(*a, func(c ApprovalCall) bool { return c.ID == id })
}

// noteApprovals keeps the calls of the event just handed out when it asks for approvals, and
// forgets one whose EventToolCallStart it is.
// s.mu must be held.
func (s *Stream) noteApprovals() {
	switch s.cur.Kind {
	case EventApprovalRequest:
		s.asked = append(s.asked, s.cur.Approvals()...)
	case EventToolCallStart: // a call that starts waits for no answer (a steer may have skipped it)
		s.asked.drop(s.cur.ID)
	}
}

// Approvals is the calls that wait for an answer (listed by the EventApprovalRequests read
// so far and not answered): a Next that returned false with an Err matching
// ErrApprovalPending goes on once each has its Approve or Deny. A new slice for each call.
func (s *Stream) Approvals() []ApprovalCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.asked)
}

// Approve lets the call id run: its EventToolCallStart comes next, and it runs as any call
// (the stream runs its Handler). It returns an error matching ErrInvalidArgument when no
// call with that id waits for an answer, and ErrClosed after the turn ended or was closed.
// Any goroutine, but not while a Next of the stream runs.
func (s *Stream) Approve(id string) error {
	return s.answer(id, func(native *C.PantoStream) C.int {
		return C.panto_stream_approve(native, pantoString(id))
	})
}

// Deny refuses the call id: its result is an error telling the model "The user denied this
// call: " and reason (which may be empty); its EventToolCallStart comes with AwaitingResult
// false. Errors as Approve.
func (s *Stream) Deny(id, reason string) error {
	return s.answer(id, func(native *C.PantoStream) C.int {
		return C.panto_stream_deny(native, pantoString(id), pantoString(reason))
	})
}

func (s *Stream) answer(id string, f func(native *C.PantoStream) C.int) error {
	err := s.st.call(func(native *C.PantoStream) error {
		if rc := f(native); rc < 0 {
			return streamError(native, rc)
		}
		return nil
	})
	if err == nil {
		s.mu.Lock()
		s.asked.drop(id)
		s.mu.Unlock()
	}
	return err
}

// decideApprovals answers every call waiting for an approval with the agent's ApprovalFunc.
// s.mu must be held.
func (s *Stream) decideApprovals(ctx context.Context) error {
	policy := s.st.agent.approve
	for _, c := range slices.Clone(s.asked) {
		approved, reason := askPolicy(ctx, policy, c)
		err := s.st.call(func(native *C.PantoStream) error {
			var rc C.int
			if approved {
				rc = C.panto_stream_approve(native, pantoString(c.ID))
			} else {
				rc = C.panto_stream_deny(native, pantoString(c.ID), pantoString(reason))
			}
			if rc < 0 {
				return streamError(native, rc)
			}
			return nil
		})
		if err != nil {
			return err
		}
		s.asked.drop(c.ID)
	}
	return nil
}

// askPolicy calls policy, a panic in it denying the call.
func askPolicy(ctx context.Context, policy ApprovalFunc, c ApprovalCall) (approved bool, reason string) {
	defer func() {
		if v := recover(); v != nil {
			approved, reason = false, fmt.Sprintf("the approval function panicked: %v", v)
		}
	}()
	return policy(ctx, c)
}

// isApprovalPending tells whether err is the library's APPROVAL_PENDING.
func isApprovalPending(err error) bool {
	e, ok := err.(*Error)
	return ok && e.Code == ErrApprovalPending
}
