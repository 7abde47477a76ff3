package panto

/*
#include <stdlib.h>
#include "panto.h"
*/
import "C"

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

// Config is the agent configuration. Empty fields are left out, so the library's defaults
// apply (base URL of the provider, API key from $ANTHROPIC_API_KEY or $OPENAI_API_KEY,
// max_tokens 4096).
type Config struct {
	Provider  string `json:"provider,omitempty"` // "anthropic" or "openai" (required)
	Model     string `json:"model,omitempty"`    // required
	BaseURL   string `json:"base_url,omitempty"`
	APIKey    string `json:"api_key,omitempty"`
	System    string `json:"system,omitempty"` // the system prompt
	MaxTokens int    `json:"max_tokens,omitempty"`
}

// Agent holds a conversation with one model. Each Run adds a turn. An Agent has at most
// one unfinished Stream at a time; Run returns an error matching ErrBusy otherwise.
//
// Close the agent when done with it (a cleanup frees it if it becomes unreachable, but
// that is only a backstop).
type Agent struct {
	c       *core
	cleanup runtime.Cleanup
}

// core owns the native agent and streams. It is what the cleanups reference, so that an
// unreachable Agent or Stream can be collected.
//
// Locking: call is held during every native call on the agent or one of its streams (the
// C ABI is not thread-safe); mu guards the state and is never held while waiting for the
// provider. A handle closed while its Next is running is freed when that call returns;
// one closed while another native call runs is queued in pending and freed by whoever
// holds call next (see unlock and kick).
type core struct {
	call sync.Mutex

	mu      sync.Mutex
	agent   *C.PantoAgent // nil once freed
	closed  bool
	streams map[*handle]struct{} // native streams not freed yet
	pending []*handle            // closed, not busy, waiting for their free
}

// handle is one native stream. Its fields are guarded by core.mu; native changes only
// while core.call is also held.
type handle struct {
	native *C.PantoStream // nil once freed
	busy   bool           // a panto_next_event on it is running
	closed bool
}

// NewAgent creates an agent from cfg. A configuration the library refuses gives an
// *Error matching ErrConfig, whose Message says why.
func NewAgent(cfg Config) (*Agent, error) {
	js, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	return NewAgentJSON(js)
}

// NewAgentJSON creates an agent from a configuration given as a JSON object, the form
// panto_agent_new takes: it reaches keys that Config does not have.
func NewAgentJSON(config []byte) (*Agent, error) {
	if err := abiCheck(); err != nil {
		return nil, err
	}
	if bytes.IndexByte(config, 0) >= 0 {
		return nil, &Error{Code: ErrInvalidArgument, Message: "the configuration holds a NUL byte"}
	}
	cs := C.CString(string(config))
	defer C.free(unsafe.Pointer(cs))
	var native *C.PantoAgent
	if rc := C.panto_agent_new(cs, &native); rc < 0 {
		if native == nil {
			return nil, &Error{Code: Code(rc)}
		}
		err := agentError(native, rc)
		C.panto_agent_free(native)
		return nil, err
	}
	c := &core{agent: native, streams: make(map[*handle]struct{})}
	a := &Agent{c: c}
	a.cleanup = runtime.AddCleanup(a, (*core).close, c)
	return a, nil
}

// Close frees the agent and closes its streams. It is idempotent and does not wait for a
// Next running on another goroutine: the native agent is then freed when that call
// returns.
func (a *Agent) Close() error {
	a.cleanup.Stop()
	a.c.close()
	return nil
}

// Run starts a turn: it appends text to the conversation as a user message and returns
// the stream of the model's answer. Nothing is sent until the first Next. ctx bounds the
// whole turn: once it is done, Next returns false and Err matches ctx.Err().
func (a *Agent) Run(ctx context.Context, text string) (*Stream, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if ctx.Err() != nil {
		return nil, contextError(ctx)
	}
	if strings.IndexByte(text, 0) >= 0 {
		return nil, &Error{Code: ErrInvalidArgument, Message: "the text holds a NUL byte"}
	}
	c := a.c
	ctext := C.CString(text)
	defer C.free(unsafe.Pointer(ctext))

	c.lock()
	if c.isClosed() {
		c.unlock()
		return nil, ErrClosed
	}
	var native *C.PantoStream
	rc := C.panto_agent_run(c.agent, ctext, &native)
	if rc < 0 {
		err := agentError(c.agent, rc)
		C.panto_stream_free(native) // NULL in practice; free accepts it
		c.unlock()
		return nil, err
	}
	h := &handle{native: native}
	c.mu.Lock()
	c.streams[h] = struct{}{}
	closed := c.closed
	if closed { // Close ran meanwhile: free the new stream with the agent
		h.closed = true
		c.pending = append(c.pending, h)
	}
	c.mu.Unlock()
	c.unlock()
	if closed {
		return nil, ErrClosed
	}
	s := &Stream{agent: a, h: h, ctx: ctx}
	s.cleanup = runtime.AddCleanup(s, func(r streamRef) { r.c.closeStream(r.h) }, streamRef{c, h})
	return s, nil
}

// Message is one message of the conversation.
type Message struct {
	Role    string         `json:"role"` // "user" or "assistant"
	Content []ContentBlock `json:"content"`
}

// ContentBlock is one block of a message.
type ContentBlock struct {
	Type string `json:"type"` // a BlockKind name: "text", "thinking", "tool_call"
	Text string `json:"text"`
}

// Conversation is the conversation so far: the user messages and the assistant messages
// of the finished turns.
func (a *Agent) Conversation() ([]Message, error) {
	js, err := a.ConversationJSON()
	if err != nil {
		return nil, err
	}
	var msgs []Message
	if err := json.Unmarshal(js, &msgs); err != nil {
		return nil, err
	}
	return msgs, nil
}

// ConversationJSON is the conversation so far as the library writes it: a JSON array of
// {"role", "content": [blocks]} messages.
func (a *Agent) ConversationJSON() (json.RawMessage, error) {
	c := a.c
	c.lock()
	defer c.unlock()
	if c.isClosed() {
		return nil, ErrClosed
	}
	var out C.PantoString
	if rc := C.panto_agent_conversation(c.agent, &out); rc < 0 {
		return nil, agentError(c.agent, rc)
	}
	return json.RawMessage(goString(out)), nil
}

type streamRef struct {
	c *core
	h *handle
}

func (c *core) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// lock takes the native-call lock, first freeing what was closed meanwhile.
func (c *core) lock() {
	c.call.Lock()
	c.drain()
}

// unlock frees what was closed during the call and releases the native-call lock.
func (c *core) unlock() {
	c.drain()
	c.call.Unlock()
	c.kick()
}

// kick frees what is waiting to be freed, unless a native call is running: its unlock
// will. Called after queueing work and after releasing call, so nothing stays queued.
func (c *core) kick() {
	for {
		c.mu.Lock()
		need := len(c.pending) > 0 || (c.closed && len(c.streams) == 0 && c.agent != nil)
		c.mu.Unlock()
		if !need || !c.call.TryLock() {
			return
		}
		c.drain()
		c.call.Unlock()
	}
}

// drain frees the queued streams, and the agent once it is closed and has none left.
// call must be held.
func (c *core) drain() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, h := range c.pending {
		if h.native != nil {
			C.panto_stream_free(h.native)
			h.native = nil
		}
		delete(c.streams, h)
	}
	c.pending = nil
	if c.closed && len(c.streams) == 0 && c.agent != nil {
		C.panto_agent_free(c.agent)
		c.agent = nil
	}
}

// closeStream marks h closed; it is freed now, or when its running Next returns.
func (c *core) closeStream(h *handle) {
	c.mu.Lock()
	if h.closed {
		c.mu.Unlock()
		return
	}
	h.closed = true
	if !h.busy {
		c.pending = append(c.pending, h)
	}
	c.mu.Unlock()
	c.kick()
}

// close marks the agent and its streams closed and frees what no running call uses.
func (c *core) close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	for h := range c.streams {
		if !h.closed {
			h.closed = true
			if !h.busy {
				c.pending = append(c.pending, h)
			}
		}
	}
	c.mu.Unlock()
	c.kick()
}
