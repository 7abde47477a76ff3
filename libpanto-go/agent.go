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
// max_tokens 4096, max_tool_iterations 10, no thinking, 2 retries, see RetryPolicy and
// Timeouts). Agent.SetConfig changes it between turns.
type Config struct {
	Provider  string `json:"provider,omitempty"` // "anthropic" or "openai" (required)
	Model     string `json:"model,omitempty"`    // required
	BaseURL   string `json:"base_url,omitempty"`
	APIKey    string `json:"api_key,omitempty"`
	System    string `json:"system,omitempty"` // the system prompt
	MaxTokens int    `json:"max_tokens,omitempty"`

	// Tools are registered as by AddTool, in order.
	Tools []Tool `json:"-"`
	// Capabilities are what the agent is granted: only the tools whose capabilities it was
	// all granted are offered to the model, and a call to another one fails the turn with
	// ErrCapability.
	Capabilities []string `json:"capabilities,omitempty"`
	// MaxToolIterations is how many tool rounds a turn may take (0: the default, 10); one
	// more fails the turn with ErrToolLoop.
	MaxToolIterations int `json:"max_tool_iterations,omitempty"`
	// ReadTool enables the native `read` tool, which requires the capability "fs.read".
	ReadTool *ReadToolConfig `json:"read_tool,omitempty"`

	// Thinking asks for extended thinking (Anthropic) or a reasoning effort (OpenAI).
	Thinking Thinking `json:"thinking,omitempty"`
	// Retry says when a failed request is sent again; nil: the defaults (2 retries).
	Retry *RetryPolicy `json:"retry,omitempty"`
	// Timeouts bound the wait for the provider; nil: the defaults.
	Timeouts *Timeouts `json:"timeouts,omitempty"`
	// KeepAlive says how long a connection is kept for the next request; nil: the default.
	KeepAlive *KeepAlive `json:"keep_alive,omitempty"`
}

// ReadToolConfig configures the native `read` tool: it reads the lines of text files under
// Root, and refuses paths that escape it (docs/tool-use.md).
type ReadToolConfig struct {
	Root     string `json:"root"`
	MaxBytes int    `json:"max_bytes,omitempty"` // the most it returns at once; 0: 65536
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
// C ABI is not thread-safe), except panto_stream_cancel, which is thread-safe and made
// under mu alone so that it never waits for a running call; mu guards the state and is
// never held while waiting for the provider. A handle closed while its Next is running is
// canceled, and freed when that call returns; one closed while another native call runs is
// queued in pending and freed by whoever holds call next (see unlock and kick).
type core struct {
	call sync.Mutex

	mu      sync.Mutex
	agent   *C.PantoAgent // nil once freed
	closed  bool
	streams map[*handle]struct{} // native streams not freed yet
	pending []*handle            // closed, not busy, waiting for their free
	tools   map[string]Tool      // the host tools added, by name
}

// handle is one native stream. Its fields are guarded by core.mu; native changes only
// while core.call is also held.
type handle struct {
	native *C.PantoStream // nil once freed
	busy   bool           // a panto_next_events on it is running
	closed bool           // no more native calls: freed, or to be freed
}

// NewAgent creates an agent from cfg. A configuration the library refuses gives an
// *Error matching ErrConfig, whose Message says why.
func NewAgent(cfg Config) (*Agent, error) {
	for _, t := range cfg.Tools {
		if err := t.Validate(); err != nil {
			return nil, err
		}
	}
	js, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	a, err := NewAgentJSON(js)
	if err != nil {
		return nil, err
	}
	for _, t := range cfg.Tools {
		if err := a.AddTool(t); err != nil {
			a.Close()
			return nil, err
		}
	}
	return a, nil
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
	c := &core{agent: native, streams: make(map[*handle]struct{}), tools: make(map[string]Tool)}
	a := &Agent{c: c}
	a.cleanup = runtime.AddCleanup(a, (*core).close, c)
	return a, nil
}

// SetConfig changes the configuration for the next turns: the fields patch sets, the others
// stay. It fails with an *Error matching ErrBusy while a stream of the agent is unfinished
// (close it, or let it end, first), and with one matching ErrConfig, whose Message says
// why, when the library refuses a value: then nothing changed.
func (a *Agent) SetConfig(patch ConfigPatch) error {
	js, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	return a.SetConfigJSON(js)
}

// SetConfigJSON changes the configuration from a JSON object holding only the keys to
// change, the form panto_agent_set_config takes (any key of NewAgentJSON but "tools").
// Errors as for SetConfig.
func (a *Agent) SetConfigJSON(changes []byte) error {
	if bytes.IndexByte(changes, 0) >= 0 {
		return &Error{Code: ErrInvalidArgument, Message: "the configuration holds a NUL byte"}
	}
	cs := C.CString(string(changes))
	defer C.free(unsafe.Pointer(cs))
	c := a.c
	c.lock()
	defer c.unlock()
	if c.isClosed() {
		return ErrClosed
	}
	if rc := C.panto_agent_set_config(c.agent, cs); rc < 0 {
		return agentError(c.agent, rc)
	}
	return nil
}

// Close frees the agent and closes its streams. It is idempotent and does not wait for a
// Next running on another goroutine: that Next is canceled, and the native agent is freed
// when it returns.
func (a *Agent) Close() error {
	a.cleanup.Stop()
	a.c.close()
	return nil
}

// RunOption sets how a turn runs.
type RunOption func(*runOptions)

type runOptions struct {
	manual bool
}

// WithManualTools makes the turn leave every tool call to the program: the stream runs no
// Handler, and the program answers each EventToolCallStart whose AwaitingResult is true with
// Stream.SubmitToolResult before the next Next.
func WithManualTools() RunOption { return func(o *runOptions) { o.manual = true } }

// Run starts a turn: it appends text to the conversation as a user message and returns
// the stream of the model's answer. Nothing is sent until the first Next. ctx bounds the
// whole turn: once it is done, Next returns false and Err matches ctx.Err(); it is also
// the context the tools' handlers receive.
//
// The stream runs the Handler of each host tool the model calls, unless the turn was
// started WithManualTools or the tool has no Handler: see Stream.
func (a *Agent) Run(ctx context.Context, text string, opts ...RunOption) (*Stream, error) {
	var o runOptions
	for _, opt := range opts {
		opt(&o)
	}
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
	s := &Stream{agent: a, h: h, ctx: ctx, manual: o.manual,
		closing: make(chan struct{}), submitted: make(chan struct{}, 1)}
	s.cleanup = runtime.AddCleanup(s, func(r streamRef) { r.c.closeStream(r.h) }, streamRef{c, h})
	return s, nil
}

// Message is one message of the conversation. Tool results are in the user message that
// follows the assistant message calling the tools.
type Message struct {
	Role    string         `json:"role"` // "user" or "assistant"
	Content []ContentBlock `json:"content"`
	// StopReason: why an assistant message ended; StopAborted for one whose turn was
	// canceled, which holds what was received of it.
	StopReason StopReason `json:"stop_reason,omitempty"`
}

// ContentBlock is one block of a message.
type ContentBlock struct {
	// "text", "thinking", "redacted_thinking", "tool_call" or "tool_result"
	Type string `json:"type"`
	Text string `json:"text"` // text, thinking; redacted_thinking: the provider's opaque data

	ID      string          `json:"id,omitempty"`       // tool_call, tool_result: the call's id
	Name    string          `json:"name,omitempty"`     // tool_call: the tool's name
	Input   json.RawMessage `json:"input,omitempty"`    // tool_call: the input, a JSON object
	Content string          `json:"content,omitempty"`  // tool_result: the result
	IsError bool            `json:"is_error,omitempty"` // tool_result: the result is a failure
}

// Conversation is the conversation so far: the user messages, and the assistant messages
// and tool results of the finished turns.
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

// Connections is what an agent's connections did so far (Agent.Connections).
type Connections struct {
	// Opened counts the connections opened: TCP connections, and CONNECT tunnels through a
	// proxy.
	Opened uint64
	// Reused counts the requests sent on a connection kept alive from an earlier request.
	Reused uint64
}

// Connections says how many connections the agent opened and how many requests went on a
// kept-alive one (see KeepAlive). It returns ErrClosed after Close.
func (a *Agent) Connections() (Connections, error) {
	c := a.c
	c.lock()
	defer c.unlock()
	if c.isClosed() {
		return Connections{}, ErrClosed
	}
	out := C.PantoConnections{size: C.uint32_t(unsafe.Sizeof(C.PantoConnections{}))}
	if rc := C.panto_agent_connections(c.agent, &out); rc < 0 {
		return Connections{}, agentError(c.agent, rc)
	}
	return Connections{Opened: uint64(out.opened), Reused: uint64(out.reused)}, nil
}

// AddTool registers a host tool: the model may call it in the next turns when the agent
// was granted the capabilities it requires. The library refuses (ErrConfig) a second tool
// of the same name, and (ErrBusy) a tool added while a stream of the agent is unfinished.
func (a *Agent) AddTool(tool Tool) error {
	if err := tool.Validate(); err != nil {
		return err
	}
	spec, err := json.Marshal(tool.Spec())
	if err != nil {
		return err
	}
	cspec := C.CString(string(spec))
	defer C.free(unsafe.Pointer(cspec))
	c := a.c
	c.lock()
	defer c.unlock()
	if c.isClosed() {
		return ErrClosed
	}
	if rc := C.panto_agent_add_tool(c.agent, cspec); rc < 0 {
		return agentError(c.agent, rc)
	}
	c.mu.Lock()
	c.tools[tool.Name] = tool
	c.mu.Unlock()
	return nil
}

// Tools is the agent's tools as a JSON array in a provider's format, as the library writes
// it: format "anthropic" ({name, description, input_schema}), "openai" ({type: "function",
// function: {name, description, parameters}}) or "panto" (the specs, with "native": true
// for the library's own tools such as `read`). With onlyAllowed, only the tools the agent
// may use: what it sends the model.
func (a *Agent) Tools(format string, onlyAllowed bool) (json.RawMessage, error) {
	if strings.IndexByte(format, 0) >= 0 {
		return nil, &Error{Code: ErrInvalidArgument, Message: "the format holds a NUL byte"}
	}
	cformat := C.CString(format)
	defer C.free(unsafe.Pointer(cformat))
	only := C.int(0)
	if onlyAllowed {
		only = 1
	}
	c := a.c
	c.lock()
	defer c.unlock()
	if c.isClosed() {
		return nil, ErrClosed
	}
	var out C.PantoString
	if rc := C.panto_agent_tools(c.agent, cformat, only, &out); rc < 0 {
		return nil, agentError(c.agent, rc)
	}
	return json.RawMessage(goString(out)), nil
}

// tool is the host tool named name, if one was added.
func (c *core) tool(name string) (Tool, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.tools[name]
	return t, ok
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

// isFreed tells whether h is closed (freed, or to be freed): no event of it is handed out.
func (c *core) isFreed(h *handle) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return h.closed
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

// closeStream marks h closed; it is freed now, or, when a Next is running on it, canceled
// and freed when that Next returns.
func (c *core) closeStream(h *handle) {
	c.mu.Lock()
	if h.closed {
		c.mu.Unlock()
		return
	}
	h.closed = true
	if h.busy {
		C.panto_stream_cancel(h.native)
	} else {
		c.pending = append(c.pending, h)
	}
	c.mu.Unlock()
	c.kick()
}

// cancel cancels the turn of h, unless it was freed. It takes only mu, never call: it
// does not wait for a running Next, which it makes return (panto_stream_cancel is
// thread-safe; mu keeps the native stream from being freed meanwhile).
func (c *core) cancel(h *handle) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h.native != nil {
		C.panto_stream_cancel(h.native)
	}
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
			if h.busy {
				C.panto_stream_cancel(h.native)
			} else {
				c.pending = append(c.pending, h)
			}
		}
	}
	c.mu.Unlock()
	c.kick()
}
