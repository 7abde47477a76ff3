package panto

/*
#include "panto.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"iter"
	"slices"
)

// finalState is what the final helpers give, gathered as Next hands out the events: the
// last assistant message, the turn's usage and request ids, and the library's check of a
// JSON answer, fetched as the turn ended (the native stream is freed then).
type finalState struct {
	start    Event          // the last MessageStart
	blocks   []ContentBlock // its completed blocks
	names    map[int]Event  // its ToolDetails, by block index
	end      *Event         // its MessageEnd
	complete *Event         // the MessageComplete
	usage    Usage          // the messages' usage summed, until MessageComplete gives the turn's

	requestIDs []string

	jsonFetched bool
	json        json.RawMessage
	jsonErr     error
}

// see records what an event handed out says about the turn's end.
func (f *finalState) see(ev Event) {
	switch ev.Kind {
	case EventMessageStart:
		f.start, f.blocks, f.names, f.end = ev, nil, nil, nil
		if ev.RequestID != "" {
			f.requestIDs = append(f.requestIDs, ev.RequestID)
		}
	case EventToolDetails:
		if f.names == nil {
			f.names = map[int]Event{}
		}
		f.names[ev.Index] = ev
	case EventBlockComplete:
		f.blocks = append(f.blocks, f.block(ev))
	case EventMessageEnd:
		f.end = &ev
		f.usage = f.usage.add(ev.Usage)
	case EventMessageComplete:
		f.complete = &ev
		f.usage = ev.Usage
	}
}

// block is the content block a BlockComplete completes.
func (f *finalState) block(ev Event) ContentBlock {
	switch ev.BlockKind {
	case BlockToolCall:
		d := f.names[ev.Index]
		input := ev.Text
		if input == "" {
			input = "{}"
		}
		return ContentBlock{Type: "tool_call", ID: d.ID, Name: d.Name, Input: json.RawMessage(input)}
	case BlockThinking:
		return ContentBlock{Type: "thinking", Text: ev.Text}
	case BlockRedactedThinking:
		return ContentBlock{Type: "redacted_thinking", Text: ev.Text}
	case BlockServerBlock:
		return ContentBlock{Type: "server_block", Name: ev.Name, JSON: ev.Text}
	}
	return ContentBlock{Type: "text", Text: ev.Text, Citations: ev.Citations}
}

func (u Usage) add(v Usage) Usage {
	return Usage{
		InputTokens:       u.InputTokens + v.InputTokens,
		OutputTokens:      u.OutputTokens + v.OutputTokens,
		CacheReadTokens:   u.CacheReadTokens + v.CacheReadTokens,
		CacheWriteTokens:  u.CacheWriteTokens + v.CacheWriteTokens,
		ReasoningTokens:   u.ReasoningTokens + v.ReasoningTokens,
		WebSearchRequests: u.WebSearchRequests + v.WebSearchRequests,
		WebFetchRequests:  u.WebFetchRequests + v.WebFetchRequests,
	}
}

// fetchJSON asks the library, as the turn ends, whether its answer is the JSON its
// response format asked for (panto_stream_final_json). The native stream must be alive,
// with the agent's call lock and the stream's mu held.
func (f *finalState) fetchJSON(native *C.PantoStream) {
	var out C.PantoString
	f.jsonFetched = true
	if rc := C.panto_stream_final_json(native, &out); rc < 0 {
		f.jsonErr = streamError(native, rc)
		return
	}
	f.json = json.RawMessage(goString(out))
}

// FinalMessage reads the rest of the turn, as Next does (handlers run, and a failure is
// returned as Err has it; ErrResultPending when a call awaits a result you give: submit
// it, then call again), and returns the turn's last assistant message (in a turn with tool
// rounds, the one after the last round): its blocks in order, its stop reason and its own
// usage (Usage has the turn's). Once the turn is over it returns the same message again.
// It does not close the stream.
func (s *Stream) FinalMessage() (*Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.next(s.ctx) {
	}
	if s.err != nil {
		return nil, s.err
	}
	f := &s.final
	if f.complete == nil || f.end == nil {
		return nil, &Error{Code: ErrState, Message: "the turn ended without a complete assistant message"}
	}
	usage := f.end.Usage
	return &Message{Role: "assistant", Content: slices.Clone(f.blocks), Model: f.start.Model,
		StopReason: f.end.StopReason, Usage: &usage}, nil
}

// FinalJSON reads the rest of the turn like FinalMessage, then returns the last message's
// text when it is the JSON the turn's response format asked for (json_schema: of the
// schema, checked by the library by the rules tool inputs are checked by). Otherwise it
// returns an *Error matching ErrOutput whose Output is the text and whose Message says what
// is wrong, or ErrState when the turn had no JSON response format.
func (s *Stream) FinalJSON() (json.RawMessage, error) {
	if _, err := s.FinalMessage(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.final.jsonFetched { // the turn's end was read by a stream that was then closed
		return nil, &Error{Code: ErrState, Message: "the turn's end was not read"}
	}
	return s.final.json, s.final.jsonErr
}

// Text yields the fragments of the turn's text blocks (not thinking, not tool calls), as
// they arrive; use it as `for text := range stream.Text()`. Like Iter, it closes the stream
// when the loop ends, a break included: check Err afterwards (and FinalMessage, Usage and
// RequestIDs still tell the end of a turn that completed).
func (s *Stream) Text() iter.Seq[string] {
	return func(yield func(string) bool) {
		for ev := range s.Iter {
			if ev.Kind == EventContentDelta && ev.BlockKind == BlockText && !yield(ev.Text) {
				return
			}
		}
	}
}

// Usage is the turn's token usage: the MessageComplete's once the turn ended, before that
// the sum of the messages that ended so far.
func (s *Stream) Usage() Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.final.usage
}

// RequestIDs are the provider's request ids of the turn's messages so far, in order (the
// RequestID of each MessageStart that had one).
func (s *Stream) RequestIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.final.requestIDs)
}

// Complete runs a turn to its end and returns its last assistant message: the one-call
// form, for scripts. Host tools run as with Run; opts are Run's.
//
//	msg, err := agent.Complete(ctx, "Name three primes.")
//	if err != nil { ... }
//	fmt.Println(msg.Text())
func (a *Agent) Complete(ctx context.Context, input string, opts ...RunOption) (*Message, error) {
	stream, err := a.Run(ctx, input, opts...)
	if err != nil {
		return nil, err
	}
	defer stream.Close()
	return stream.FinalMessage()
}

// Text is the message's text blocks, concatenated.
func (m Message) Text() string {
	var b []byte
	for _, c := range m.Content {
		if c.Type == "text" {
			b = append(b, c.Text...)
		}
	}
	return string(b)
}
