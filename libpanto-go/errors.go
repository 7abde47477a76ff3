package panto

/*
#include "panto.h"

// PANTO_ERROR_INIT as a function, so the binding follows the header's initialiser.
static PantoError panto_go_error_init(void) { PantoError e = PANTO_ERROR_INIT; return e; }
*/
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"
)

// Code is a panto failure code (a negative PantoStatus). A Code is itself an error, so
// the constants below are the sentinels for errors.Is:
//
//	if errors.Is(err, panto.ErrRateLimit) { ... }
type Code int32

const (
	// Errors of the call itself.
	ErrInvalidArgument Code = C.PANTO_ERR_INVALID_ARGUMENT // e.g. an identifier that is not UTF-8
	ErrOutOfMemory     Code = C.PANTO_ERR_OUT_OF_MEMORY
	ErrConfig          Code = C.PANTO_ERR_CONFIG // the agent configuration was refused
	ErrBusy            Code = C.PANTO_ERR_BUSY   // the agent already has an unfinished stream
	// A tool call awaits Stream.SubmitToolResult; not sticky: submit, then call Next again.
	ErrResultPending Code = C.PANTO_ERR_RESULT_PENDING
	ErrNoSuchCall    Code = C.PANTO_ERR_NO_SUCH_CALL // no tool call with that id awaits a result
	// The call does not fit the state, e.g. Stream.Reopen on a stream that did not fail
	// at the provider-open boundary.
	ErrState Code = C.PANTO_ERR_STATE
	// A tool call listed by an EventApprovalRequest waits for Stream.Approve or Stream.Deny
	// (every call that could run is done); not sticky: answer, then call Next again.
	ErrApprovalPending Code = C.PANTO_ERR_APPROVAL_PENDING

	// Errors of a turn.
	ErrAuthentication Code = C.PANTO_ERR_AUTHENTICATION  // HTTP 401
	ErrPermission     Code = C.PANTO_ERR_PERMISSION      // HTTP 403
	ErrNotFound       Code = C.PANTO_ERR_NOT_FOUND       // HTTP 404
	ErrInvalidRequest Code = C.PANTO_ERR_INVALID_REQUEST // HTTP 400, 413, 422
	ErrRateLimit      Code = C.PANTO_ERR_RATE_LIMIT      // HTTP 429
	ErrOverloaded     Code = C.PANTO_ERR_OVERLOADED      // HTTP 529 or an overloaded_error event
	ErrServer         Code = C.PANTO_ERR_SERVER          // HTTP 5xx, or another status / error event
	ErrTimeout        Code = C.PANTO_ERR_TIMEOUT         // Config.Timeouts, or a context past its deadline
	ErrConnection     Code = C.PANTO_ERR_CONNECTION      // connect failed, connection reset, TLS
	ErrProtocol       Code = C.PANTO_ERR_PROTOCOL        // malformed stream
	ErrCanceled       Code = C.PANTO_ERR_CANCELED        // Stream.Cancel, or a canceled context
	ErrToolLoop       Code = C.PANTO_ERR_TOOL_LOOP       // more tool rounds than Config.MaxToolIterations
	ErrCapability     Code = C.PANTO_ERR_CAPABILITY      // the model called a tool the agent may not use

	// A conversation was refused (Agent.Import, Agent.Truncate): the Message names the
	// first problem, e.g. `messages[3].content[1]: tool_result "call_9" answers no tool call
	// of messages[2]`; nothing changed.
	ErrConversation Code = C.PANTO_ERR_CONVERSATION
	// The session store failed: a file could not be created, written or read, or is not a
	// session. ErrSessionLocked and ErrNoSuchSession match it too.
	ErrSession Code = C.PANTO_ERR_SESSION
	// Another agent, of this process or another, has the session open.
	ErrSessionLocked Code = C.PANTO_ERR_SESSION_LOCKED
	// No session with that id in the directory (SessionResume). It also matches
	// fs.ErrNotExist.
	ErrNoSuchSession Code = C.PANTO_ERR_NO_SUCH_SESSION
	// The model's answer is not the JSON the response format asked for (not JSON, or not
	// of the schema): Stream.FinalJSON and Parse. Error.Output holds the text.
	ErrOutput Code = C.PANTO_ERR_OUTPUT
)

// String is the library's stable name, e.g. "authentication".
func (c Code) String() string { return C.GoString(C.panto_status_name(C.int(c))) }

// Error makes a Code usable as a sentinel error.
func (c Code) Error() string { return "panto: " + c.String() }

// Is makes the session codes match the wider errors they are kinds of: ErrSessionLocked and
// ErrNoSuchSession are failures of the session store (ErrSession), and a missing session is
// a missing file (fs.ErrNotExist), so code written for files handles it.
func (c Code) Is(target error) bool {
	switch c {
	case ErrSessionLocked:
		return target == ErrSession
	case ErrNoSuchSession:
		return target == ErrSession || target == fs.ErrNotExist
	}
	return false
}

// ErrClosed is returned by the calls on a closed Agent, and matched (with ErrCanceled) by
// Stream.Err once Close ended the turn.
var ErrClosed = errors.New("panto: closed")

// Error is a failure reported by libpanto, with the detail the library keeps on the
// handle. Use errors.As to get it:
//
//	var perr *panto.Error
//	if errors.As(err, &perr) && perr.HTTPStatus == 429 { ... }
type Error struct {
	Code       Code
	HTTPStatus int // 0 when the failure was not an HTTP answer
	// The provider's error type for the provider's errors, e.g. "authentication_error";
	// panto's own for failures of its making: "protocol_error", "connection_error",
	// "timeout_error", "canceled_error", "capability_error", "tool_loop_error".
	Type      string
	Message   string // human-readable; never contains an API key
	RequestID string // the provider's request id, when known
	// RetryAfter is how long the provider asked to wait before trying again
	// (retry-after-ms, Retry-After); nil when it did not say.
	RetryAfter *time.Duration
	// Headers are the failed response's headers of interest, names in lower case
	// (request-id, x-request-id, retry-after, retry-after-ms, x-should-retry,
	// anthropic-ratelimit-*, x-ratelimit-*, x-amzn-requestid, x-amzn-errortype); empty
	// when none or no HTTP answer.
	Headers map[string]string
	// Output is the model's text as it came, for ErrOutput.
	Output string

	cause error // for a cancellation, the context's error or ErrClosed; else nil
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("panto: ")
	b.WriteString(e.Code.String())
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	var detail []string
	if e.HTTPStatus != 0 {
		detail = append(detail, fmt.Sprintf("HTTP %d", e.HTTPStatus))
	}
	if e.Type != "" {
		detail = append(detail, e.Type)
	}
	if e.RequestID != "" {
		detail = append(detail, "request "+e.RequestID)
	}
	if len(detail) > 0 {
		b.WriteString(" (")
		b.WriteString(strings.Join(detail, ", "))
		b.WriteString(")")
	}
	return b.String()
}

// Unwrap gives the Code (so errors.Is(err, panto.ErrX) works) and, for a cancellation,
// the context's error (so errors.Is(err, context.Canceled) works) or ErrClosed.
func (e *Error) Unwrap() []error {
	if e.cause != nil {
		return []error{e.Code, e.cause}
	}
	return []error{e.Code}
}

// errClosedTurn is the error of a turn its stream's Close ended: a cancellation (the
// library's close policy) that also matches ErrClosed.
func errClosedTurn() error {
	return &Error{Code: ErrCanceled, Type: "canceled_error", Message: "the stream was closed", cause: ErrClosed}
}

// contextError is the error of a turn stopped by its context: it matches ctx.Err() (and
// the cause, if one was given) as well as ErrCanceled, or ErrTimeout for a deadline.
func contextError(ctx context.Context) error {
	err := ctx.Err()
	code, typ := ErrCanceled, "canceled_error"
	if errors.Is(err, context.DeadlineExceeded) {
		code, typ = ErrTimeout, "timeout_error"
	}
	msg := "the turn was canceled: " + err.Error()
	if cause := context.Cause(ctx); cause != nil && cause != err {
		msg += ": " + cause.Error()
		err = errors.Join(err, cause)
	}
	return &Error{Code: code, Type: typ, Message: msg, cause: err}
}

// fromNative builds an Error from the status rc of a failed call and its detail.
func fromNative(rc C.int, e *C.PantoError) *Error {
	out := &Error{
		Code:       Code(rc),
		HTTPStatus: int(e.http_status),
		Type:       goString(e._type),
		Message:    goString(e.message),
		RequestID:  goString(e.request_id),
		Output:     goString(e.output),
	}
	if s := float64(e.retry_after); s >= 0 { // -1: it did not say
		d := maxRetryAfter // a wait longer than a Duration holds
		if s < maxRetryAfter.Seconds() {
			d = time.Duration(s * float64(time.Second))
		}
		out.RetryAfter = &d
	}
	if h := goString(e.headers); h != "" && h != "{}" {
		_ = json.Unmarshal([]byte(h), &out.Headers) // the library writes an object of strings
	}
	return out
}

// maxRetryAfter is the longest RetryAfter: what a Duration holds.
const maxRetryAfter = time.Duration(1<<63 - 1)

func agentError(a *C.PantoAgent, rc C.int) *Error {
	e := C.panto_go_error_init()
	C.panto_agent_error(a, &e)
	return fromNative(rc, &e)
}

// streamError is the error of a failed call on a stream: the stream's detail when it is
// about this failure (the library keeps the most recent one it reported).
func streamError(s *C.PantoStream, rc C.int) *Error {
	e := C.panto_go_error_init()
	if C.panto_stream_error(s, &e) != rc {
		return &Error{Code: Code(rc)}
	}
	return fromNative(rc, &e)
}

func toolsError(t *C.PantoTools, rc C.int) *Error {
	e := C.panto_go_error_init()
	C.panto_tools_error(t, &e)
	return fromNative(rc, &e)
}
