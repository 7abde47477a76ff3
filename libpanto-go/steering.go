package panto

/*
#include "panto.h"
*/
import "C"

import "encoding/json"

// Where an EventUserMessage's message came from (Event.Source).
const (
	SourceSteer    = "steer"
	SourceFollowUp = "follow_up"
)

// Source is where an EventUserMessage's message came from: SourceSteer (it joined a tool
// round's results) or SourceFollowUp (the user message of the stream's next turn: a
// FollowUp, or a Steer no round took); "" for another kind.
func (e Event) Source() string {
	if e.Kind != EventUserMessage {
		return ""
	}
	return e.Name
}

// Steer says text to the running turn: it joins the conversation at the end of the current
// (or next) tool round, after the round's results in the same user message, and the model
// reads it in the round's next request; with no tool round left, it starts a new turn of
// this stream as FollowUp does. An EventUserMessage marks where it entered. Safe from any
// goroutine, also while another is in Next (the stream takes the message as it goes on).
// It returns an *Error matching ErrInvalidArgument for an empty text, ErrState once the
// stream's turns are over (run a new turn), ErrClosed after Close.
func (s *Stream) Steer(text string) error { return s.st.queueMessage(text, false) }

// FollowUp queues text as the user message of a new turn of this stream, which starts when
// the current turn ends: after its EventMessageComplete, Next goes on with an
// EventUserMessage and the new turn's events (its own usage, cost and budget); the stream
// ends after the last turn's EventMessageComplete. Safe from any goroutine; errors as Steer.
func (s *Stream) FollowUp(text string) error { return s.st.queueMessage(text, true) }

// Queued is a steer or follow-up taken back by WithdrawQueued: its Source ("steer" or
// "follow_up") and its Text.
type Queued struct {
	Source string `json:"source"`
	Text   string `json:"text"`
}

// WithdrawQueued takes back the steers and follow-ups queued that the stream has not taken
// yet: they will not reach the model. It returns them in the order queued (one a tool round
// or a turn took already comes as its EventUserMessage). Safe from any goroutine, as Steer;
// a closed stream has none.
func (s *Stream) WithdrawQueued() ([]Queued, error) {
	st := s.st
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed || st.native == nil {
		return nil, nil
	}
	var out C.PantoString
	if rc := C.panto_stream_withdraw_queued(st.native, &out); rc < 0 {
		return nil, &Error{Code: Code(rc)}
	}
	taken := []Queued{}
	if err := json.Unmarshal([]byte(goString(out)), &taken); err != nil {
		return nil, &Error{Code: ErrProtocol, Message: "panto_stream_withdraw_queued: " + err.Error()}
	}
	return taken, nil
}

// queueMessage takes only mu, as cancel does: a Next in another goroutine does not hold it
// while it waits in the library.
func (st *streamCore) queueMessage(text string, followUp bool) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed || st.native == nil {
		if st.closed {
			return ErrClosed
		}
		return &Error{Code: ErrState, Type: "state_error", Message: "the stream's turns are over: run a new turn"}
	}
	var rc C.int
	if followUp {
		rc = C.panto_stream_follow_up(st.native, pantoString(text))
	} else {
		rc = C.panto_stream_steer(st.native, pantoString(text))
	}
	switch {
	case rc == C.PANTO_ERR_INVALID_ARGUMENT:
		return &Error{Code: ErrInvalidArgument, Type: "invalid_argument", Message: "the message is empty"}
	case rc == C.PANTO_ERR_STATE:
		return &Error{Code: ErrState, Type: "state_error", Message: "the stream's turns are over: run a new turn"}
	case rc < 0:
		return &Error{Code: Code(rc)}
	}
	return nil
}
