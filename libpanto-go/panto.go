// Package panto is the Go binding of panto, an LLM-agent runtime: the C ABI of
// include/panto.h. The module links the static libpanto.a it holds in lib/<goos>_<goarch>/
// (`make go-lib` puts it there; linux/amd64 and linux/arm64), so a program needs no
// libpanto.so at run time; the build tag panto_pkgconfig links an installed libpanto found
// by pkg-config instead. See docs/go.md.
//
// An Agent holds a conversation; each Run appends a user message and returns a Stream of
// typed events for the model's answer:
//
//	agent, err := panto.NewAgent(panto.Config{Provider: "anthropic", Model: "claude-sonnet-4-5"})
//	if err != nil { ... }
//	defer agent.Close()
//	stream, err := agent.Run(ctx, "Hello")
//	if err != nil { ... }
//	defer stream.Close()
//	for ev := range stream.Iter {
//		if ev.Kind == panto.EventContentDelta {
//			fmt.Print(ev.Text)
//		}
//	}
//	if err := stream.Err(); err != nil { ... }
//
// or, Scanner-style: for stream.Next() { ev := stream.Event() }.
//
// # Tools
//
// A Tool is a name, a description, a JSON Schema of its input and a Handler. NewTool
// derives the schema from a struct's fields and tags and decodes the input into it:
//
//	type GetWeather struct {
//		City string `json:"city" description:"The city"`
//		Unit string `json:"unit,omitempty" enum:"c,f"`
//	}
//	weather, err := panto.NewTool("", "Current weather for a city.",
//		func(ctx context.Context, in GetWeather) (string, error) { return lookup(ctx, in.City, in.Unit) },
//		panto.WithCapabilities("net"))
//	agent, err := panto.NewAgent(panto.Config{..., Tools: []panto.Tool{weather}, Capabilities: []string{"net"}})
//
// While the program iterates, the stream runs the handler of each call the model makes (the
// calls of one message at once, each on a goroutine, but those of a Sequential tool) and
// sends the results back; the program sees EventToolCallStart, EventToolProgress
// (ReportProgress) and EventToolResult go by. A
// turn started WithManualTools (or a tool without a Handler) leaves the calls to the
// program: Stream.SubmitToolResult. A Registry keeps tools by name and exports them in each
// provider's format (ToolFormat). The library checks tools and exports them: the binding
// only builds their specs. See docs/tool-use.md for the loop and the capabilities.
//
// # Images and PDFs
//
// A user message or a tool result may be made of parts: text, and media, the raw bytes of an
// image or a PDF (see Part). RunParts runs a turn with them, a tool returns them from a
// PartsHandler (NewTool makes one from a function returning []Part), and
// SubmitToolResultParts gives them for a call the program runs:
//
//	photo, err := panto.MediaFile("photo.jpg")
//	if err != nil { ... }
//	stream, err := agent.RunParts(ctx, []panto.Part{panto.Text("What is in this picture?"), photo})
//
// The library reads the bytes without a copy, recognizes the format by them, fits images to
// the providers' limits and says in a text part what it could not send. The EventToolResult
// of a result with media lists what was sent (Event.Parts); the conversation keeps the media
// in base64 (ContentBlock.Data).
//
// # Conversations that last
//
// Agent.Export gives the conversation as a versioned JSON document, the same in every
// language, and Agent.Import takes one back (checked first: ErrConversation names the first
// problem, and nothing changes); export, import, export gives the same bytes. Truncate and
// DropLast edit it between turns. A turn that fails before any answer takes its user message
// back out; RollbackTurn forgets a failed or canceled turn that kept something. SetConfig
// may switch provider or model between turns: the conversation is kept in panto's own form
// and written for whichever provider comes next.
//
// Config.Session keeps the conversation in an append-only file that a later agent resumes,
// each message synced to disk as it is committed; Agent.Session tells which, Agent.Fork
// branches it, ListSessions lists a folder's. A session another agent holds gives
// ErrSessionLocked; a missing one resumed gives ErrNoSuchSession, which matches
// fs.ErrNotExist.
//
// Config.Compaction summarizes the older messages when the context nears the model's window:
// the turn's stream shows EventCompactionStart and EventCompactionEnd before the request.
// Agent.Compact does it on demand.
//
// # Short forms, request parameters, structured output
//
// Agent.Complete runs a turn to its end and returns its last message; Stream.Text yields
// the text only; Stream.FinalMessage reads the rest of a turn. Config embeds Params, the
// request parameters (temperature, tool choice, prompt caching, extra headers and body...),
// and WithOptions overrides them for one turn. Parse[T] asks for an answer of T's JSON form
// (its schema derived as a tool's) and decodes it; an answer that is not gives ErrOutput.
//
// Errors are *Error values whose Code is also an error, so errors.Is(err,
// panto.ErrAuthentication) and errors.As(err, &perr) both work.
//
// # Resilience
//
// A request that fails before any content of the message arrived (HTTP 408, 409, 429, 5xx,
// a dropped connection, an error event right after the message began) is tried again after
// a backoff, as Config.Retry says; each retry shows as an EventProviderRetry, after which
// the message starts over with a new EventMessageStart. Config.Timeouts bounds the wait
// for the provider (ErrTimeout). Config.Thinking asks for extended thinking (Anthropic) or
// a reasoning effort (OpenAI). Agent.SetConfig changes any of it between turns, and
// Stream.Reopen runs a turn refused at the provider-open boundary (an HTTP 400, say) again
// after such a change.
//
// # Cancellation
//
// The context given to Run bounds the turn: when it is canceled, a Next waiting for the
// provider returns at once with an Err matching both context.Canceled and ErrCanceled
// (a deadline: context.DeadlineExceeded and ErrTimeout). Stream.Cancel does the same from
// any goroutine. What the model said of the interrupted message stays in the conversation,
// with the stop reason StopAborted, and the agent can run the next turn.
//
// Closing a stream before its turn ended (Close, a break out of Iter, or the cleanup of a
// forgotten stream) ends the turn as a cancellation does, by the library's close policy,
// the same in every language: the conversation keeps what the program saw of the message,
// marked StopAborted.
//
// An Agent and its Streams may be used from several goroutines: every native call on them
// is serialized, except the cancellation, which never waits. Close on a Stream or an Agent
// is idempotent and safe while a Next waits on another goroutine: that Next is canceled
// and returns.
//
// Strings go to the library as they are, NUL bytes included: the library alone decides
// what it takes (it replaces invalid UTF-8 in the text the model reads with U+FFFD, and
// refuses identifiers and JSON that are not UTF-8).
package panto

/*
#include "panto.h"
*/
import "C"

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
	"unsafe"
)

// ABIVersion is the PANTO_ABI_VERSION of the header this package was built with.
const ABIVersion = C.PANTO_ABI_VERSION

// ErrABIMismatch is wrapped by the error NewAgent returns when the linked libpanto was
// built for another ABI version than include/panto.h.
var ErrABIMismatch = errors.New("panto: libpanto ABI version mismatch")

var abiCheck = sync.OnceValue(func() error {
	if got := uint32(C.panto_abi_version()); got != C.PANTO_ABI_VERSION {
		return fmt.Errorf("%w: the library has ABI version %d, this binding was built against "+
			"include/panto.h version %d; rebuild libpanto and this package from the same checkout",
			ErrABIMismatch, got, C.PANTO_ABI_VERSION)
	}
	return nil
})

// LibraryVersion is the version of the linked libpanto, e.g. "0.1.0" (Version is this module's).
func LibraryVersion() string { return C.GoString(C.panto_version()) }

// EventKind says what an Event reports, and so which of its fields mean something.
type EventKind int32

const (
	EventMessageStart    EventKind = C.PANTO_EVENT_MESSAGE_START    // ID, Model
	EventBlockStart      EventKind = C.PANTO_EVENT_BLOCK_START      // Index, BlockKind
	EventContentDelta    EventKind = C.PANTO_EVENT_CONTENT_DELTA    // Index, BlockKind, Text: the new fragment
	EventBlockComplete   EventKind = C.PANTO_EVENT_BLOCK_COMPLETE   // Index, BlockKind, Text: the whole block
	EventMessageComplete EventKind = C.PANTO_EVENT_MESSAGE_COMPLETE // StopReason, ProviderStopReason, Usage: the turn's; terminal
	EventMessageEnd      EventKind = C.PANTO_EVENT_MESSAGE_END      // StopReason, ProviderStopReason, Usage: one assistant message's
	EventToolDetails     EventKind = C.PANTO_EVENT_TOOL_DETAILS     // Index, BlockKind, ID, Name: the model named a tool
	EventToolCallStart   EventKind = C.PANTO_EVENT_TOOL_CALL_START  // ID, Name, Text (and Input()): the input; AwaitingResult, Sequential
	EventToolResult      EventKind = C.PANTO_EVENT_TOOL_RESULT      // ID, Name, Text: the result sent to the model; IsError; Parts()
	// Attempt, Delay, HTTPStatus, Text (the reason): the request failed and is sent again
	// after Delay (the next Next waits it); the message starts over with a MessageStart.
	EventProviderRetry EventKind = C.PANTO_EVENT_PROVIDER_RETRY
	// TokensBefore (the context's estimated size), Text (why: "threshold", before a request
	// that would pass the context window less its reserve, or "manual", Agent.Compact):
	// older messages are being summarized.
	EventCompactionStart EventKind = C.PANTO_EVENT_COMPACTION_START
	// TokensBefore, TokensAfter (estimated, with the summary), MessageCount (the messages
	// summarized), Text (the summary): the conversation now begins with the summary.
	EventCompactionEnd EventKind = C.PANTO_EVENT_COMPACTION_END
	// ID, Name, Text, Fraction: a host tool running for the call reported progress
	// (ReportProgress), between the round's ToolCallStarts and its ToolResults.
	EventToolProgress EventKind = C.PANTO_EVENT_TOOL_PROGRESS
	// Approvals(): the calls of the round that wait for a person's answer (Stream.Approve,
	// Stream.Deny), before the round's other ToolCallStarts.
	EventApprovalRequest EventKind = C.PANTO_EVENT_APPROVAL_REQUEST
	// Text, Source(): a message of the user's entered the conversation (Stream.Steer, after
	// a tool round's results; Stream.FollowUp, as the next turn's user message).
	EventUserMessage EventKind = C.PANTO_EVENT_USER_MESSAGE
)

// String is the library's stable name, e.g. "content_delta"; "unknown" for another value.
func (k EventKind) String() string { return C.GoString(C.panto_event_kind_name(C.int(k))) }

// BlockKind is the kind of a content block.
type BlockKind int32

const (
	BlockNone     BlockKind = C.PANTO_BLOCK_NONE
	BlockText     BlockKind = C.PANTO_BLOCK_TEXT
	BlockThinking BlockKind = C.PANTO_BLOCK_THINKING
	BlockToolCall BlockKind = C.PANTO_BLOCK_TOOL_CALL
	// BlockRedactedThinking is thinking the provider encrypted: its BlockStart is followed
	// by a BlockComplete whose Text is the provider's opaque data, with no ContentDelta.
	BlockRedactedThinking BlockKind = C.PANTO_BLOCK_REDACTED_THINKING
	// BlockServerBlock is a block of the provider's that panto keeps without reading it (a
	// server tool's call or result, a compaction, ...): its ContentDeltas are its input's JSON
	// as it streams, its BlockComplete's Text is the block's JSON object as received and Name
	// its type ("server_tool_use", "web_search_tool_result", ...).
	BlockServerBlock BlockKind = C.PANTO_BLOCK_SERVER_BLOCK
)

// String is the library's stable name, e.g. "text".
func (k BlockKind) String() string { return C.GoString(C.panto_block_kind_name(C.int(k))) }

// StopReason is why the model stopped, the same set for every provider.
type StopReason int32

const (
	StopNone          StopReason = C.PANTO_STOP_NONE
	StopEndTurn       StopReason = C.PANTO_STOP_END_TURN       // anthropic end_turn, openai stop
	StopMaxTokens     StopReason = C.PANTO_STOP_MAX_TOKENS     // anthropic max_tokens, openai length
	StopStopSequence  StopReason = C.PANTO_STOP_STOP_SEQUENCE  // anthropic stop_sequence
	StopToolUse       StopReason = C.PANTO_STOP_TOOL_USE       // anthropic tool_use, openai tool_calls
	StopRefusal       StopReason = C.PANTO_STOP_REFUSAL        // anthropic refusal
	StopContentFilter StopReason = C.PANTO_STOP_CONTENT_FILTER // openai content_filter
	StopPauseTurn     StopReason = C.PANTO_STOP_PAUSE_TURN     // anthropic pause_turn
	StopAborted       StopReason = C.PANTO_STOP_ABORTED        // the turn was canceled
	StopOther         StopReason = C.PANTO_STOP_OTHER          // see Event.ProviderStopReason
	StopBudget        StopReason = C.PANTO_STOP_BUDGET         // MessageComplete: the turn's Budget is spent; see Event.BudgetKind
)

// String is the library's stable name, e.g. "end_turn".
func (r StopReason) String() string { return C.GoString(C.panto_stop_reason_name(C.int(r))) }

// MarshalText writes the stable name, so a StopReason reads well in JSON.
func (r StopReason) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText reads a stable name, as in the conversation JSON; a name this version does
// not know reads as StopOther.
func (r *StopReason) UnmarshalText(b []byte) error {
	for v := StopNone; v <= StopOther; v++ {
		if v.String() == string(b) {
			*r = v
			return nil
		}
	}
	*r = StopOther
	return nil
}

// Usage is the token count of a turn, normalized across providers. InputTokens excludes
// cached tokens.
type Usage struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	CacheReadTokens  int64 `json:"cache_read_tokens"`
	CacheWriteTokens int64 `json:"cache_write_tokens"`
	ReasoningTokens  int64 `json:"reasoning_tokens"`
	// Anthropic's server tools run (its usage.server_tool_use), billed per request; in a
	// conversation's JSON only when not 0.
	WebSearchRequests int64 `json:"web_search_requests,omitempty"`
	WebFetchRequests  int64 `json:"web_fetch_requests,omitempty"`
}

// Event is one step of a turn. Which fields mean something depends on Kind (see the
// EventKind constants); the others are zero. An Event owns its strings: it stays valid
// after the next call on the stream. (The bytes of a ToolResult's images and documents are
// the exception: they are lent until then, and copied only when asked for; see
// PartInfo.Data.)
//
// A turn is one or more assistant messages, with the tool calls of each one run between
// them:
//
//	MessageStart, (BlockStart, [ToolDetails], ContentDelta…, BlockComplete)…, MessageEnd,
//	[ToolCallStart…, ToolProgress…, ToolResult…, MessageStart, …, MessageEnd]…, MessageComplete
//
// with a CompactionStart and a CompactionEnd before a MessageStart when the conversation is
// compacted first (Compaction), and only those and MessageComplete in Agent.Compact's.
//
// Event is a flat value rather than one type per kind: it mirrors the C ABI one to one,
// costs no allocation beyond its strings, compares with ==, and new fields can be added
// without breaking callers' type switches. (That is why a tool call's input is the method
// Input rather than a json.RawMessage field, which would make Event incomparable.)
type Event struct {
	Kind      EventKind
	Index     int       // the content block's index within the message
	BlockKind BlockKind // block events
	// ContentDelta: the fragment (of the input JSON, for a tool call block);
	// BlockComplete: the whole block; ToolCallStart: the input, a JSON object;
	// ToolResult: the result sent to the model (with media, its text parts joined by "\n";
	// see Parts).
	Text string
	// MessageStart: the provider's message id; ToolDetails, ToolCallStart, ToolResult:
	// the tool call's id.
	ID    string
	Model string // MessageStart: the model that answers
	// MessageStart: the provider's request id (its request-id or x-request-id header), ""
	// when it sent none.
	RequestID string
	Name      string // ToolDetails, ToolCallStart, ToolResult: the tool's name; BlockComplete of a BlockServerBlock: its type
	// BlockComplete of a BlockText: its citations (Anthropic's), a JSON array of the
	// citation objects as received; "" when it has none.
	Citations          string
	StopReason         StopReason
	ProviderStopReason string // MessageEnd, MessageComplete: the provider's own value
	Usage              Usage  // MessageEnd: the message's usage; MessageComplete: the turn's
	// MessageEnd, MessageComplete: Usage's cost in USD at the model's list prices (the model
	// catalog, or Config.ModelInfo), -1 when a price it needs is unknown.
	Cost    float64
	IsError bool // ToolResult: the result is a failure
	// ToolCallStart: the program must give the result (an Agent runs the tool's Handler
	// itself unless the turn is manual; see Stream.SubmitToolResult); false when panto
	// produces it (a native tool, an unknown tool, an input the schema refuses).
	AwaitingResult bool
	// ToolCallStart: the call runs alone, after the calls before it finished and before
	// those after it start (its tool is Sequential, or Config.ToolExecution is
	// ToolsSequential); false: it runs alongside the others of its message.
	Sequential bool
	// ToolProgress: how far the tool is, 0 to 1, or -1 when it reported text only.
	Fraction float64
	// ProviderRetry: the retry's number (1 for the first retry of the message), how long
	// the next Next waits before sending the request again, and the HTTP status of the
	// failed answer (0 when it was not one: a dropped connection, an error event). Text is
	// the reason, the failure's type and message ("overloaded_error: Overloaded").
	Attempt    int
	Delay      time.Duration
	HTTPStatus int
	// CompactionStart, CompactionEnd: the context's estimated size in tokens before the
	// compaction; CompactionEnd: after it, and how many messages the summary replaced.
	TokensBefore int64
	TokensAfter  int64
	MessageCount int

	parts     *[]PartInfo     // ToolResult with media: see Parts
	approvals *[]ApprovalCall // ApprovalRequest: see Approvals
}

// Parts is the parts of a ToolResult as sent to the model, in order: text (and the notes of
// media the library dropped), images and documents; nil for a result that is one text (then
// Text is all of it) and for the other kinds. A new slice for each call. The parts' bytes
// are lent: see PartInfo.Data.
func (e Event) Parts() []PartInfo {
	if e.parts == nil {
		return nil
	}
	return slices.Clone(*e.parts)
}

// Input is the input of a ToolCallStart as JSON (an object; "{}" when empty), nil for
// another kind. It is Text, typed for json.Unmarshal.
func (e Event) Input() json.RawMessage {
	if e.Kind != EventToolCallStart {
		return nil
	}
	return json.RawMessage(e.Text)
}

// goString copies a borrowed PantoString into Go memory.
func goString(s C.PantoString) string {
	if s.ptr == nil || s.len == 0 {
		return ""
	}
	return string(unsafe.Slice((*byte)(unsafe.Pointer(s.ptr)), int(s.len)))
}

// pantoString lends s to the library for the length of a call, without a copy: the bytes of
// a Go string hold no Go pointers, so cgo lets C read them; the library copies what it keeps.
func pantoString(s string) C.PantoString {
	return C.PantoString{ptr: (*C.char)(unsafe.Pointer(unsafe.StringData(s))), len: C.size_t(len(s))}
}

// pantoBytes is pantoString for a byte slice.
func pantoBytes(b []byte) C.PantoString {
	return C.PantoString{ptr: (*C.char)(unsafe.Pointer(unsafe.SliceData(b))), len: C.size_t(len(b))}
}

// event copies every field of a borrowed event of the last batch out at once, but the bytes
// of its parts, which stay lent (partData).
func (st *streamCore) event(ev *C.PantoEvent) Event {
	str := st.str
	out := Event{
		Kind:               EventKind(ev.kind),
		Index:              int(ev.index),
		BlockKind:          BlockKind(ev.block_kind),
		Text:               str(ev.text),
		ID:                 str(ev.id),
		Model:              str(ev.model),
		Name:               str(ev.name),
		StopReason:         StopReason(ev.stop_reason),
		ProviderStopReason: str(ev.provider_stop_reason),
		IsError:            ev.is_error != 0,
		AwaitingResult:     ev.awaiting_result != 0,
		Sequential:         ev.sequential != 0,
		Fraction:           float64(ev.fraction),
		Cost:               float64(ev.cost),
		RequestID:          str(ev.request_id),
		Attempt:            int(ev.attempt),
		Delay:              time.Duration(ev.delay_ms) * time.Millisecond,
		HTTPStatus:         int(ev.http_status),
		TokensBefore:       int64(ev.tokens_before),
		TokensAfter:        int64(ev.tokens_after),
		MessageCount:       int(ev.message_count),
		Usage: Usage{
			InputTokens:      int64(ev.usage.input_tokens),
			OutputTokens:     int64(ev.usage.output_tokens),
			CacheReadTokens:  int64(ev.usage.cache_read_tokens),
			CacheWriteTokens: int64(ev.usage.cache_write_tokens),
			ReasoningTokens:  int64(ev.usage.reasoning_tokens),
			// (at the event's end, apart from usage: sized structs)
			WebSearchRequests: int64(ev.web_search_requests),
			WebFetchRequests:  int64(ev.web_fetch_requests),
		},
	}
	if out.Kind == EventBlockComplete && out.BlockKind == BlockText {
		// The C event's name is a text block's citations (a server block's type).
		out.Citations, out.Name = out.Name, ""
	}
	if ev.part_count > 0 {
		infos := unsafe.Slice(ev.parts, int(ev.part_count))
		parts := make([]PartInfo, len(infos))
		for i := range infos {
			parts[i] = st.partInfo(&infos[i])
		}
		out.parts = &parts
	}
	if ev.approval_count > 0 {
		calls := unsafe.Slice(ev.approvals, int(ev.approval_count))
		list := make([]ApprovalCall, len(calls))
		for i := range calls {
			list[i] = ApprovalCall{ID: str(calls[i].id), Name: str(calls[i].name), Input: json.RawMessage(str(calls[i].input))}
		}
		out.approvals = &list
	}
	return out
}

// partInfo copies a borrowed part description, but its data. st.mu must be held.
func (st *streamCore) partInfo(p *C.PantoPartInfo) PartInfo {
	info := PartInfo{
		Kind:      PartKind(p.kind),
		Text:      st.str(p.text),
		MediaType: st.str(p.media_type),
		Name:      st.str(p.name),
		ByteSize:  int64(p.byte_size),
		Width:     int(p.width),
		Height:    int(p.height),
	}
	if p.data.len > 0 {
		info.data = &partData{st: st, lent: st.lent, ptr: unsafe.Pointer(p.data.ptr), n: int(p.data.len)}
	}
	return info
}
