package panto

/*
#include "panto.h"
*/
import "C"

import (
	"context"
	"fmt"
)

// Export is the conversation as a versioned JSON document, the same in every language:
//
//	{"version": 1, "messages": [{"role": "user", "content": [...]}, ...]}
//
// (docs/conversations.md has the format). It holds every block, media inline, and each
// assistant message's provider, model, stop reason and usage; Import takes it back, in
// this agent or another, of any language, and Export then gives the same bytes.
func (a *Agent) Export() ([]byte, error) {
	var out []byte
	err := a.c.do(func(native *C.PantoAgent) C.int {
		var js C.PantoString
		rc := C.panto_agent_export(native, &js)
		if rc >= 0 {
			out = []byte(goString(js))
		}
		return rc
	})
	return out, err
}

// Import replaces the conversation with a document of Export. Everything is checked first;
// a document the library refuses gives an *Error matching ErrConversation whose Message
// names the first problem, and the agent is unchanged. It fails with ErrBusy while a
// stream of the agent is unfinished. With a session, the import is recorded in it.
func (a *Agent) Import(doc []byte) error {
	return a.c.do(func(native *C.PantoAgent) C.int {
		return C.panto_agent_import(native, pantoBytes(doc))
	})
}

// MessageCount is the number of messages in the conversation.
func (a *Agent) MessageCount() (int, error) {
	var n C.size_t
	err := a.c.do(func(native *C.PantoAgent) C.int { return C.panto_agent_message_count(native, &n) })
	return int(n), err
}

// Spent is what a conversation's assistant messages used and cost (Agent.Spent).
type Spent struct {
	Usage Usage
	// Cost in USD at the model catalog's list prices, each message priced at the model that
	// wrote it; -1 when one message's cost is unknown (a model the catalog lacks).
	Cost float64
}

// Spent returns what the conversation's assistant messages used and cost so far: their
// usages summed and priced. Messages a compaction replaced are not counted, nor its summary
// request.
func (a *Agent) Spent() (Spent, error) {
	var u C.PantoUsage
	var cost C.double
	err := a.c.do(func(native *C.PantoAgent) C.int { return C.panto_agent_spent(native, &u, &cost) })
	return Spent{Usage: Usage{
		InputTokens:      int64(u.input_tokens),
		OutputTokens:     int64(u.output_tokens),
		CacheReadTokens:  int64(u.cache_read_tokens),
		CacheWriteTokens: int64(u.cache_write_tokens),
		ReasoningTokens:  int64(u.reasoning_tokens),
	}, Cost: float64(cost)}, err
}

// Truncate keeps the first messageCount messages of the conversation and drops the rest.
// It fails, changing nothing, with ErrInvalidArgument when messageCount is negative or
// more than there are, with ErrConversation when the last message kept would be an
// assistant message whose tool calls lose their results, and with ErrBusy while a stream
// of the agent is unfinished.
func (a *Agent) Truncate(messageCount int) error {
	if messageCount < 0 {
		return &Error{Code: ErrInvalidArgument, Message: fmt.Sprintf("cannot keep %d messages", messageCount)}
	}
	return a.c.do(func(native *C.PantoAgent) C.int {
		return C.panto_agent_truncate(native, C.size_t(messageCount))
	})
}

// RollbackTurn removes the last turn when it failed or was canceled after keeping something
// (a partial answer, tool calls and their results): its user message and every message after
// it. It returns how many messages were removed, 0 when there is nothing to roll back. (A
// turn that fails before keeping anything takes its user message back out by itself, so the
// next Run never sends two user messages in a row.)
//
//	if err := stream.Err(); err != nil {
//		agent.RollbackTurn() // forget the question and any partial answer
//	}
//
// It fails, changing nothing, with ErrBusy while a stream of the agent is unfinished.
func (a *Agent) RollbackTurn() (int, error) {
	var n C.size_t
	err := a.c.do(func(native *C.PantoAgent) C.int { return C.panto_agent_rollback_turn(native, &n) })
	return int(n), err
}

// DropLast drops the last n messages: Truncate(MessageCount() - n), checked and done in one
// step (to undo a failed or canceled turn, use RollbackTurn). Errors as Truncate's
// (ErrInvalidArgument when n is negative or more than there are).
func (a *Agent) DropLast(n int) error {
	c := a.c
	c.call.Lock()
	defer c.call.Unlock()
	if c.native == nil {
		return ErrClosed
	}
	var count C.size_t
	if rc := C.panto_agent_message_count(c.native, &count); rc < 0 {
		return agentError(c.native, rc)
	}
	if n < 0 || n > int(count) {
		return &Error{Code: ErrInvalidArgument,
			Message: fmt.Sprintf("cannot drop %d messages of %d", n, int(count))}
	}
	if rc := C.panto_agent_truncate(c.native, count-C.size_t(n)); rc < 0 {
		return agentError(c.native, rc)
	}
	return nil
}

// Compact summarizes the older messages now, as a turn would before a request past the
// context window (see Compaction): the returned stream, read like Run's, yields
// EventCompactionStart, EventCompactionEnd and an EventMessageComplete carrying the summary
// request's stop reason and usage. ctx bounds it like a turn. It fails with an *Error
// matching ErrState when nothing is older than Compaction.KeepRecentTokens (nothing to
// compact), ErrBusy while a stream is unfinished; a summary request that fails ends the
// stream with its error and leaves the conversation unchanged.
func (a *Agent) Compact(ctx context.Context) (*Stream, error) {
	return a.CompactWith(ctx, "")
}

// CompactWith is Compact with the user's instructions for the summary (what to keep or
// stress: "keep the API names"), appended to the compaction prompt of this summary request
// alone; "" (or blanks) is none.
func (a *Agent) CompactWith(ctx context.Context, instructions string) (*Stream, error) {
	return a.startStream(ctx, false, func(native *C.PantoAgent, out **C.PantoStream) C.int {
		return C.panto_agent_compact_with(native, pantoString(instructions), out)
	})
}

// do makes one native call on the agent, f, under the call lock: ErrClosed after Close,
// the agent's error detail when f returns a failure.
func (c *agentCore) do(f func(*C.PantoAgent) C.int) error {
	c.call.Lock()
	defer c.call.Unlock()
	if c.native == nil {
		return ErrClosed
	}
	if rc := f(c.native); rc < 0 {
		return agentError(c.native, rc)
	}
	return nil
}
