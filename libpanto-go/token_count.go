package panto

/*
#include "panto.h"

// A count's input as PANTO_INPUT_INIT makes it; no parts: the conversation as it is (NULL).
static int panto_go_count_tokens(PantoAgent *agent, const PantoPart *parts, size_t part_count,
                                 PantoTokenCount *out) {
    PantoInput input = PANTO_INPUT_INIT;
    input.parts = parts;
    input.part_count = part_count;
    return panto_agent_count_tokens(agent, part_count > 0 ? &input : NULL, out);
}
*/
import "C"

import (
	"context"
	"runtime"
	"unsafe"
)

// TokenCount is the input tokens of a request (Agent.CountTokens): as the provider counted
// them, or, with Estimated, as panto estimated them (a provider without a counting endpoint:
// OpenAI Chat Completions).
type TokenCount struct {
	InputTokens uint64
	Estimated   bool
}

// CountTokens is the input tokens of the request the next turn would send with input as its
// user message (none: the conversation as it is): the conversation, the system prompt, the
// tools and thinking, as Run would send them. Nothing is appended.
//
//	n, err := agent.CountTokens(ctx, panto.Text("Summarize the report"))
//
// The provider counts them (Anthropic, Gemini, OpenAI Responses, Bedrock: their
// token-counting endpoints, one request under the agent's timeouts); OpenAI Chat Completions
// has no such endpoint, so the count is panto's estimate and Estimated is true. The call
// blocks until the answer (ctx is checked before it, not during: the agent's timeouts bound
// it); a failed request returns the *Error a turn's would (ErrAuthentication,
// ErrTimeout, ...), and ErrBusy while a stream of the agent is unfinished.
func (a *Agent) CountTokens(ctx context.Context, input ...Part) (TokenCount, error) {
	if ctx != nil && ctx.Err() != nil {
		return TokenCount{}, contextError(ctx)
	}
	c := a.c
	c.call.Lock()
	defer c.call.Unlock()
	if c.native == nil {
		return TokenCount{}, ErrClosed
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	lent := lendParts(input, &pin)
	out := C.PantoTokenCount{size: C.uint32_t(unsafe.Sizeof(C.PantoTokenCount{}))}
	if rc := C.panto_go_count_tokens(c.native, partsPointer(lent), C.size_t(len(lent)), &out); rc < 0 {
		return TokenCount{}, agentError(c.native, rc)
	}
	return TokenCount{InputTokens: uint64(out.input_tokens), Estimated: out.estimated != 0}, nil
}
