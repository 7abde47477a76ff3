package panto

/*
#include "panto.h"

// A tool's result as PANTO_TOOL_RESULT_INIT makes it, so the binding follows the header.
static int panto_go_submit(PantoStream *stream, PantoString call_id, PantoString content,
                           const PantoPart *parts, size_t part_count, int is_error) {
    PantoToolResult result = PANTO_TOOL_RESULT_INIT;
    result.is_error = is_error;
    result.call_id = call_id;
    result.content = content;
    result.parts = parts;
    result.part_count = part_count;
    return panto_stream_submit_tool_result(stream, &result);
}
*/
import "C"

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
)

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

// runHandler runs a tool's handler, Handler or PartsHandler; an error or a panic gives a
// failed result.
func runHandler(ctx context.Context, t Tool, input string) (res toolResult) {
	defer func() {
		if r := recover(); r != nil {
			res = toolResult{content: fmt.Sprintf("panic: %v", r), isError: true}
		}
	}()
	var err error
	if t.PartsHandler != nil {
		res.parts, err = t.PartsHandler(ctx, json.RawMessage(input))
	} else {
		res.content, err = t.Handler(ctx, json.RawMessage(input))
	}
	if err != nil {
		return toolResult{content: err.Error(), isError: true}
	}
	return res
}

// toolResult is the result of a tool call: content, then parts.
type toolResult struct {
	content string
	parts   []Part
	isError bool
}

// SubmitToolResult gives the result of the tool call id, announced by an
// EventToolCallStart with AwaitingResult, to the model: content is what it reads, as it is
// (the library replaces invalid UTF-8 with U+FFFD), isError marks a failure (the turn goes
// on). It returns an error matching ErrNoSuchCall when no call with that id awaits a
// result, and ErrClosed after the turn ended or was closed.
//
// Call it before the next Next. It may also answer a call the stream would run itself
// (a tool with a Handler): the Handler then does not run.
func (s *Stream) SubmitToolResult(id, content string, isError bool) error {
	return s.submitResult(id, toolResult{content: content, isError: isError})
}

// SubmitToolResultParts is SubmitToolResult with a result made of parts: text, images and
// PDFs (see Part), such as a screenshot the tool took. The library reads the parts' bytes
// during the call, without a copy, and fits the media then; media it cannot send become a
// text part saying what was dropped and why. The EventToolResult that follows shows what
// was sent (Event.Parts).
func (s *Stream) SubmitToolResultParts(id string, parts []Part, isError bool) error {
	return s.submitResult(id, toolResult{parts: parts, isError: isError})
}

// submitResult gives a result the program submits.
func (s *Stream) submitResult(id string, res toolResult) error {
	if err := s.submit(id, res); err != nil {
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
func (s *Stream) submit(id string, res toolResult) error {
	flag := C.int(0)
	if res.isError {
		flag = 1
	}
	st := s.st
	st.agent.call.Lock()
	defer st.agent.call.Unlock()
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed || st.native == nil {
		return ErrClosed
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	lent := lendParts(res.parts, &pin)
	st.endLending()
	rc := C.panto_go_submit(st.native, pantoString(id), pantoString(res.content), partsPointer(lent),
		C.size_t(len(lent)), flag)
	if rc < 0 {
		return streamError(st.native, rc)
	}
	return nil
}
