package panto

/*
#include "panto.h"

// A tool's result as PANTO_TOOL_RESULT_INIT makes it, so the binding follows the header.
static int panto_go_submit(PantoStream *stream, PantoString call_id, PantoString content, int is_error) {
    PantoToolResult result = PANTO_TOOL_RESULT_INIT;
    result.is_error = is_error;
    result.call_id = call_id;
    result.content = content;
    return panto_stream_submit_tool_result(stream, &result);
}
*/
import "C"

import (
	"context"
	"encoding/json"
	"fmt"
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
// EventToolCallStart with AwaitingResult, to the model: content is what it reads, as it is
// (the library replaces invalid UTF-8 with U+FFFD), isError marks a failure (the turn goes
// on). It returns an error matching ErrNoSuchCall when no call with that id awaits a
// result, and ErrClosed after the turn ended or was closed.
//
// Call it before the next Next. It may also answer a call the stream would run itself
// (a tool with a Handler): the Handler then does not run.
func (s *Stream) SubmitToolResult(id, content string, isError bool) error {
	if err := s.submit(id, content, isError); err != nil {
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
func (s *Stream) submit(id, content string, isError bool) error {
	flag := C.int(0)
	if isError {
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
	if rc := C.panto_go_submit(st.native, pantoString(id), pantoString(content), flag); rc < 0 {
		return streamError(st.native, rc)
	}
	return nil
}
