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
	"errors"
	"fmt"
	"runtime"
)

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
	s.tools.answered(id)
	select { // wakes the goroutine of Events waiting for the result
	case s.submitted <- struct{}{}:
	default:
	}
	return nil
}

// forwardTools hands the library the progress and the results the handlers gave since the
// last call. A result whose call the program answered meanwhile (SubmitToolResult on
// another goroutine) is dropped.
func (s *Stream) forwardTools() error {
	notes, done := s.tools.take()
	for _, n := range notes {
		s.forwardProgress(n)
	}
	for _, c := range done {
		if err := s.submit(c.id, c.res); err != nil && !errors.Is(err, ErrNoSuchCall) {
			return err
		}
	}
	return nil
}

// forwardProgress passes a progress note to the library; one the library refuses (its call
// has its result already) is dropped.
func (s *Stream) forwardProgress(n progressNote) {
	_ = s.st.call(func(native *C.PantoStream) error {
		C.panto_stream_tool_progress(native, pantoString(n.id), pantoString(n.text), C.double(n.fraction))
		return nil
	})
}

// submit passes a tool result to the library.
func (s *Stream) submit(id string, res toolResult) error {
	flag := C.int(0)
	if res.isError {
		flag = 1
	}
	return s.st.call(func(native *C.PantoStream) error {
		var pin runtime.Pinner
		defer pin.Unpin()
		lent := lendParts(res.parts, &pin)
		rc := C.panto_go_submit(native, pantoString(id), pantoString(res.content), partsPointer(lent),
			C.size_t(len(lent)), flag)
		if rc < 0 {
			return streamError(native, rc)
		}
		return nil
	})
}
