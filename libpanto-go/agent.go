package panto

/*
#include "panto.h"

// A turn's input as PANTO_INPUT_INIT makes it, so the binding follows the header.
static int panto_go_run(PantoAgent *agent, PantoString text, const PantoPart *parts, size_t part_count,
                        PantoString options, PantoStream **out_stream) {
    PantoInput input = PANTO_INPUT_INIT;
    input.text = text;
    input.parts = parts;
    input.part_count = part_count;
    input.options = options;
    return panto_agent_run(agent, &input, out_stream);
}
*/
import "C"

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"runtime"
	"sync"
	"unsafe"
)

// Config is the agent configuration. Empty fields are left out, so the library's defaults
// apply (base URL from $ANTHROPIC_BASE_URL or $OPENAI_BASE_URL, else the provider's public
// API; API key from $ANTHROPIC_API_KEY or $OPENAI_API_KEY,
// max_tokens 4096, max_tool_iterations 10, no thinking, 2 retries, see RetryPolicy and
// Timeouts). Agent.SetConfig changes it between turns.
type Config struct {
	Provider  string `json:"provider,omitempty"` // "anthropic", "openai", "openai-responses", "gemini" or "bedrock" (required)
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
	// ThinkingBudget sets Anthropic's thinking budget in tokens (>= 1024) instead of a
	// level (max_tokens is raised above it when needed); 0: none.
	ThinkingBudget int `json:"-"`
	// Params are the request parameters: temperature, tool choice, response format,
	// prompt caching, extra headers and body... (see Params).
	Params
	// ToolExecution: whether the host tool calls of one message run at the same time
	// (ToolsParallel, the default) or one after another; a Sequential tool's calls run
	// alone either way.
	ToolExecution ToolExecution `json:"tool_execution,omitempty"`
	// Log writes a line per request, retry and closed connection; nil: as PANTO_LOG says.
	Log *Log `json:"log,omitempty"`
	// Retry says when a failed request is sent again; nil: the defaults (2 retries).
	Retry *RetryPolicy `json:"retry,omitempty"`
	// Timeouts bound the wait for the provider; nil: the defaults.
	Timeouts *Timeouts `json:"timeouts,omitempty"`
	// KeepAlive says how long a connection is kept for the next request; nil: the default.
	KeepAlive *KeepAlive `json:"keep_alive,omitempty"`

	// Compaction says when older messages are summarized to fit the context window; nil:
	// the defaults (on, for a model whose window the library knows).
	Compaction *Compaction `json:"compaction,omitempty"`
	// Session keeps the conversation in a session file that survives the process (opened,
	// resumed or created as Session.Mode says); nil: the conversation lives in memory only.
	Session *Session `json:"session,omitempty"`
	// MCPServers are MCP servers (stdio or Streamable HTTP) by name, whose tools the agent offers as
	// NAME__TOOL and runs itself (docs/mcp.md); the library checks them.
	MCPServers map[string]MCPServer `json:"mcp_servers,omitempty"`
	// ModelInfo gives the model's limits, prices and abilities where the model catalog lacks
	// them or differs (docs/models-and-cost.md); nil: the catalog's.
	ModelInfo *ModelInfo `json:"model_info,omitempty"`
	// Budget is what one turn may spend before it ends normally with StopBudget; nil: no
	// budget.
	Budget *Budget `json:"budget,omitempty"`
	// Approve answers the calls that wait for a person's approval (a Tool's NeedsApproval,
	// or an approval rule that asks) as the stream meets them: Next calls it for each, once
	// the round's other calls are done, and approves or denies as it says; nil: the program
	// answers (Stream.Approve, Stream.Deny, after Next stopped with ErrApprovalPending). See
	// ApprovalFunc.
	Approve ApprovalFunc `json:"-"`
}

// ApprovalFunc decides a call that waits for an approval: true runs it; false denies it, and
// the model reads "The user denied this call: " and reason. It runs on the goroutine that
// calls Next, with the stream's lock held: it must not call the stream's methods (a person's
// answer that takes long is better given by closing the stream and Agent.ResumeTurn later).
// ctx is the Run context. A panic in it denies the call, its value as the reason.
type ApprovalFunc func(ctx context.Context, call ApprovalCall) (approved bool, reason string)

// MCPServer is one entry of Config.MCPServers, passed to the library as it is (docs/mcp.md):
// a Command (stdio) or a URL (Streamable HTTP), not both.
type MCPServer struct {
	Command       string            `json:"command,omitempty"`
	Args          []string          `json:"args,omitempty"`
	Env           map[string]string `json:"env,omitempty"` // added to PATH and HOME, all it gets
	Cwd           string            `json:"cwd,omitempty"`
	Tools         []string          `json:"tools,omitempty"`    // an allow-list of its tool names
	Requires      []string          `json:"requires,omitempty"` // capabilities each of its tools needs
	TimeoutMs     int               `json:"timeout_ms,omitempty"`
	InitTimeoutMs int               `json:"init_timeout_ms,omitempty"`
	URL           string            `json:"url,omitempty"`     // a Streamable HTTP server's endpoint
	Headers       map[string]string `json:"headers,omitempty"` // sent on its every request (a bearer token)
}

// MarshalJSON writes the JSON object panto_agent_new takes (NewAgentJSON).
func (c Config) MarshalJSON() ([]byte, error) {
	type plain Config // without this method
	js, err := json.Marshal(plain(c))
	if err != nil {
		return nil, err
	}
	return withThinking(js, c.Thinking, c.ThinkingBudget)
}

// ReadToolConfig configures the native `read` tool: it reads the lines of text files under
// Root, returns images and PDFs (known by their bytes) as attachments, fitted like any media
// (see Part), and refuses paths that escape it (docs/tool-use.md).
type ReadToolConfig struct {
	Root     string `json:"root"`
	MaxBytes int    `json:"max_bytes,omitempty"` // the most it returns at once; 0: 65536
	// Confined nil or true: paths outside Root are refused. false: they are read too, for an
	// approval rule whose input matches "outside" Root to ask about (docs/tool-use.md).
	Confined *bool `json:"confined,omitempty"`
}

// Agent holds a conversation with one model. Each Run adds a turn. An Agent has at most
// one unfinished Stream at a time; Run returns an error matching ErrBusy otherwise.
//
// Close the agent when done with it (a cleanup frees it if it becomes unreachable, but
// that is only a backstop).
type Agent struct {
	c       *agentCore
	cleanup runtime.Cleanup
}

// agentCore owns the native agent. It is what the cleanups reference, so that an
// unreachable Agent can be collected.
//
// The C ABI is not thread-safe: call is held during every native call on the agent and its
// streams, except panto_stream_cancel, which may be called from any thread (see
// streamCore). It is never held while a tool's Handler runs. mu guards the fields below it.
type agentCore struct {
	call   sync.Mutex
	native *C.PantoAgent // nil once freed; guarded by call

	mu      sync.Mutex
	closed  bool                     // Close was called: Run refuses
	streams map[*streamCore]struct{} // the streams whose native stream is not freed
	tools   map[string]Tool          // the host tools added, by name

	approve ApprovalFunc // Config.Approve (set once, by NewAgent)
}

// NewAgent creates an agent from cfg. A configuration the library refuses gives an
// *Error matching ErrConfig, whose Message says why.
func NewAgent(cfg Config) (*Agent, error) {
	js, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	a, err := NewAgentJSON(js)
	if err != nil {
		return nil, err
	}
	a.c.approve = cfg.Approve
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
	var native *C.PantoAgent
	if rc := C.panto_agent_new(pantoBytes(config), &native); rc < 0 {
		if native == nil {
			return nil, &Error{Code: Code(rc)}
		}
		err := agentError(native, rc)
		C.panto_agent_free(native)
		return nil, err
	}
	c := &agentCore{native: native, streams: make(map[*streamCore]struct{}), tools: make(map[string]Tool)}
	a := &Agent{c: c}
	a.cleanup = runtime.AddCleanup(a, func(c *agentCore) { go c.close() }, c)
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
	c := a.c
	c.call.Lock()
	defer c.call.Unlock()
	if c.native == nil {
		return ErrClosed
	}
	if rc := C.panto_agent_set_config(c.native, pantoBytes(changes)); rc < 0 {
		return agentError(c.native, rc)
	}
	return nil
}

// Close closes the agent's streams (see Stream.Close) and frees the agent. It is
// idempotent; a Next running on another goroutine is canceled, and Close waits for it to
// return, which it does at once.
func (a *Agent) Close() error {
	a.cleanup.Stop()
	a.c.close()
	return nil
}

// RunOption sets how a turn runs.
type RunOption func(*runOptions)

type runOptions struct {
	manual     bool
	options    []byte // PantoInput.options; nil: none
	optionsErr error  // TurnOptions that could not be written
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
// started WithManualTools or the tool has no Handler: see Stream. WithOptions overrides
// request parameters for this turn only; options the library refuses give an *Error
// matching ErrConfig, and nothing is added to the conversation.
func (a *Agent) Run(ctx context.Context, text string, opts ...RunOption) (*Stream, error) {
	return a.run(ctx, text, nil, opts)
}

// RunParts starts a turn whose user message is parts, in order: text, images and PDFs (see
// Part). It is Run otherwise:
//
//	photo, err := panto.MediaFile("photo.jpg")
//	if err != nil { ... }
//	stream, err := agent.RunParts(ctx, []panto.Part{panto.Text("What is in this picture?"), photo})
//
// The library reads the parts' bytes during the call, without a copy, and fits the media
// then: the conversation keeps them as it sends them (base64), and media it cannot send
// become a text part saying what was dropped and why, without failing the call.
func (a *Agent) RunParts(ctx context.Context, parts []Part, opts ...RunOption) (*Stream, error) {
	return a.run(ctx, "", parts, opts)
}

// Continue starts a turn that answers the conversation as it is, appending no user message:
// its last message must be the user's (a question, a tool round's results), e.g. a
// conversation Import brought from another process or worker. It is Run otherwise; a
// conversation that does not end with a user message gives an *Error matching
// ErrConversation, and a turn that fails keeping nothing leaves the conversation as it was.
func (a *Agent) Continue(ctx context.Context, opts ...RunOption) (*Stream, error) {
	o, err := collectRunOptions(opts)
	if err != nil {
		return nil, err
	}
	return a.startStream(ctx, o.manual, func(native *C.PantoAgent, out **C.PantoStream) C.int {
		return C.panto_agent_continue(native, pantoBytes(o.options), out)
	})
}

// run starts a turn whose user message is text followed by parts.
func (a *Agent) run(ctx context.Context, text string, parts []Part, opts []RunOption) (*Stream, error) {
	o, err := collectRunOptions(opts)
	if err != nil {
		return nil, err
	}
	return a.startStream(ctx, o.manual, func(native *C.PantoAgent, out **C.PantoStream) C.int {
		var pin runtime.Pinner
		defer pin.Unpin()
		lent := lendParts(parts, &pin)
		return C.panto_go_run(native, pantoString(text), partsPointer(lent), C.size_t(len(lent)),
			pantoBytes(o.options), out)
	})
}

// collectRunOptions applies a turn's RunOptions; the first that could not be made fails.
func collectRunOptions(opts []RunOption) (runOptions, error) {
	var o runOptions
	for _, opt := range opts {
		opt(&o)
	}
	return o, o.optionsErr
}

// startStream makes the native call that starts a stream of the agent (a turn, a
// compaction) under the call lock, and wraps the stream; ctx becomes the stream's context.
func (a *Agent) startStream(ctx context.Context, manual bool,
	start func(*C.PantoAgent, **C.PantoStream) C.int) (*Stream, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if ctx.Err() != nil {
		return nil, contextError(ctx)
	}
	c := a.c
	c.call.Lock()
	defer c.call.Unlock()
	if c.native == nil {
		return nil, ErrClosed
	}
	var native *C.PantoStream
	if rc := start(c.native, &native); rc < 0 {
		return nil, agentError(c.native, rc)
	}
	return a.newStream(ctx, native, manual)
}

// newStream wraps a native stream the agent just returned. c.call must be held.
func (a *Agent) newStream(ctx context.Context, native *C.PantoStream, manual bool) (*Stream, error) {
	c := a.c
	st := &streamCore{agent: c, native: native}
	c.mu.Lock()
	closed := c.closed
	if !closed {
		c.streams[st] = struct{}{}
	}
	c.mu.Unlock()
	if closed { // Close runs meanwhile, and frees the agent once it has the call lock
		C.panto_stream_free(native)
		return nil, ErrClosed
	}
	s := &Stream{agent: a, st: st, ctx: ctx, manual: manual, tools: newToolRunner(),
		closing: make(chan struct{}), submitted: make(chan struct{}, 1), cancelCh: make(chan struct{})}
	s.cleanup = runtime.AddCleanup(s, collectStream, streamParts{st, s.tools})
	return s, nil
}

// Message is one message of the conversation. Tool results are in the user message that
// follows the assistant message calling the tools.
type Message struct {
	Role    string         `json:"role"` // "user" or "assistant"
	Content []ContentBlock `json:"content"`
	// Provider and Model: who wrote an assistant message ("anthropic", "openai",
	// "openai-responses", "gemini" or "bedrock", and the model's name). Thinking goes back only to that provider
	// and model.
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	// StopReason: why an assistant message ended; StopAborted for one whose turn was
	// canceled, which holds what was received of it.
	StopReason StopReason `json:"stop_reason,omitempty"`
	Usage      *Usage     `json:"usage,omitempty"` // an assistant message's usage
	// ReasoningDetails: an assistant message's reasoning as OpenRouter takes it back, a JSON
	// array of its elements as the server gave them; it goes back with the message's tool
	// calls to the provider and model that wrote it only
	ReasoningDetails string `json:"reasoning_details,omitempty"`
	// Container: the id of the container Anthropic's code execution ran in for an assistant
	// message, "" for none; later requests to Anthropic carry the last one.
	Container string `json:"container,omitempty"`
	// Compaction is set on the user message that holds the summary of compacted messages.
	Compaction *CompactionInfo `json:"compaction,omitempty"`
}

// CompactionInfo is what a summary message replaced.
type CompactionInfo struct {
	MessageCount int   `json:"message_count"` // the messages summarized
	TokensBefore int64 `json:"tokens_before"` // the context's estimated size before
}

// ContentBlock is one block of a message.
type ContentBlock struct {
	// "text", "thinking", "redacted_thinking", "image", "document", "tool_call",
	// "tool_result" or "server_block"
	Type string `json:"type"`
	Text string `json:"text"` // text, thinking; redacted_thinking: the provider's opaque data
	// thinking, and text and tool_call of a provider that signs them (Gemini): the
	// provider's signature of it, when it gave one
	Signature string `json:"signature,omitempty"`
	// text (an assistant's): its citations, a JSON array of the citation objects as the
	// provider sent them; they go back only to the provider and model that wrote them
	Citations string `json:"citations,omitempty"`

	ID    string          `json:"id,omitempty"`    // tool_call, tool_result: the call's id
	Name  string          `json:"name,omitempty"`  // tool_call: the tool's name; document: its name, when given; server_block: its type; thinking of an OpenAI-compatible server: the field it came in (reasoning_content goes back, docs/conversations.md)
	Input json.RawMessage `json:"input,omitempty"` // tool_call: the input, a JSON object
	// tool_result: the result when it is one text; "" when it has media (see Parts)
	Content string `json:"content,omitempty"`
	// tool_result with media: its blocks in order, text, image and document ones (in the
	// JSON: "content" is then this array)
	Parts   []ContentBlock `json:"-"`
	IsError bool           `json:"is_error,omitempty"` // tool_result: the result is a failure

	MediaType string `json:"media_type,omitempty"` // image, document: e.g. "image/png", "application/pdf"
	Data      string `json:"data,omitempty"`       // image, document: the bytes sent, base64 (see Bytes)

	// server_block: a block of the provider's that panto does not interpret (a server tool's
	// call or result, a compaction, ...), its JSON object as received; it goes back only to
	// the provider and model that wrote it
	JSON string `json:"json,omitempty"`
}

// contentBlockJSON is a ContentBlock as the library writes it: a tool_result's content is a
// string, or an array of blocks.
type contentBlockJSON struct {
	plainContentBlock
	Content json.RawMessage `json:"content,omitempty"`
}

// plainContentBlock is ContentBlock without its JSON methods.
type plainContentBlock ContentBlock

// UnmarshalJSON reads a block of the conversation JSON.
func (b *ContentBlock) UnmarshalJSON(data []byte) error {
	var raw contentBlockJSON
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*b = ContentBlock(raw.plainContentBlock)
	if c := bytes.TrimSpace(raw.Content); len(c) > 0 && c[0] == '[' {
		return json.Unmarshal(c, &b.Parts)
	} else if len(c) > 0 {
		return json.Unmarshal(c, &b.Content)
	}
	return nil
}

// MarshalJSON writes the block as the conversation JSON has it.
func (b ContentBlock) MarshalJSON() ([]byte, error) {
	raw := contentBlockJSON{plainContentBlock: plainContentBlock(b)}
	var err error
	switch {
	case b.Parts != nil:
		raw.Content, err = json.Marshal(b.Parts)
	case b.Content != "":
		raw.Content, err = json.Marshal(b.Content)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(raw)
}

// Bytes is an image's or a document's bytes, decoded from Data.
func (b ContentBlock) Bytes() ([]byte, error) { return base64.StdEncoding.DecodeString(b.Data) }

// Conversation is the conversation so far: the user messages, and the assistant messages
// and tool results of the finished turns (Export has it as a document to save).
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

// ConversationJSON is the conversation so far as the library writes it: the "messages"
// array of Export, byte for byte.
func (a *Agent) ConversationJSON() (json.RawMessage, error) {
	return a.c.jsonOf(func(native *C.PantoAgent, out *C.PantoString) C.int {
		return C.panto_agent_conversation(native, out)
	})
}

// jsonOf is the JSON text a native call on the agent gives, copied while call is held (the
// library lends it until the next call on the agent).
func (c *agentCore) jsonOf(f func(native *C.PantoAgent, out *C.PantoString) C.int) (json.RawMessage, error) {
	c.call.Lock()
	defer c.call.Unlock()
	if c.native == nil {
		return nil, ErrClosed
	}
	var out C.PantoString
	if rc := f(c.native, &out); rc < 0 {
		return nil, agentError(c.native, rc)
	}
	return json.RawMessage(goString(out)), nil
}

// Settings are the settings an agent holds (Agent.Settings), in the keys of Config.
type Settings struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// BaseURL is where requests go: given, or derived from the provider's environment
	// variable or default (after a provider switch too).
	BaseURL           string   `json:"base_url"`
	System            *string  `json:"system"` // nil: none
	MaxTokens         int      `json:"max_tokens"`
	Thinking          Thinking `json:"thinking"`
	MaxToolIterations int      `json:"max_tool_iterations"`
	Capabilities      []string `json:"capabilities"`
	Budget            Budget   `json:"budget"` // each field nil when that budget is unset
}

// Settings reads the settings the agent holds (never its API key, nor its tools): after
// SetConfig switched the provider, the address and model the switch gave.
func (a *Agent) Settings() (Settings, error) {
	js, err := a.SettingsJSON()
	if err != nil {
		return Settings{}, err
	}
	var s Settings
	if err := json.Unmarshal(js, &s); err != nil {
		return Settings{}, err
	}
	return s, nil
}

// SettingsJSON is Settings as the library writes it (panto_agent_settings).
func (a *Agent) SettingsJSON() (json.RawMessage, error) {
	return a.c.jsonOf(func(native *C.PantoAgent, out *C.PantoString) C.int {
		return C.panto_agent_settings(native, out)
	})
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
	c.call.Lock()
	defer c.call.Unlock()
	if c.native == nil {
		return Connections{}, ErrClosed
	}
	out := C.PantoConnections{size: C.uint32_t(unsafe.Sizeof(C.PantoConnections{}))}
	if rc := C.panto_agent_connections(c.native, &out); rc < 0 {
		return Connections{}, agentError(c.native, rc)
	}
	return Connections{Opened: uint64(out.opened), Reused: uint64(out.reused)}, nil
}

// AddTool registers a host tool: the model may call it in the next turns when the agent
// was granted the capabilities it requires. The library refuses (ErrConfig) a tool that
// breaks a rule (see Tool.Validate) or has the name of another, and (ErrBusy) a tool added
// while a stream of the agent is unfinished.
func (a *Agent) AddTool(tool Tool) error {
	if err := tool.checkHandlers(); err != nil {
		return err
	}
	spec, err := json.Marshal(tool.Spec())
	if err != nil {
		return err
	}
	c := a.c
	c.call.Lock()
	defer c.call.Unlock()
	if c.native == nil {
		return ErrClosed
	}
	if rc := C.panto_agent_add_tool(c.native, pantoBytes(spec)); rc < 0 {
		return agentError(c.native, rc)
	}
	c.mu.Lock()
	c.tools[tool.Name] = tool
	c.mu.Unlock()
	return nil
}

// Tools is the agent's tools as a JSON array in format, as the library writes it. With
// onlyAllowed, only the tools the agent may use: what it sends the model.
func (a *Agent) Tools(format ToolFormat, onlyAllowed bool) (json.RawMessage, error) {
	only := C.int(0)
	if onlyAllowed {
		only = 1
	}
	return a.c.jsonOf(func(native *C.PantoAgent, out *C.PantoString) C.int {
		return C.panto_agent_tools(native, C.int(format), only, out)
	})
}

// tool is the host tool named name, if one was added.
func (c *agentCore) tool(name string) (Tool, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.tools[name]
	return t, ok
}

// forget drops st from the streams to close with the agent, once its native stream is freed.
func (c *agentCore) forget(st *streamCore) {
	c.mu.Lock()
	delete(c.streams, st)
	c.mu.Unlock()
}

// close closes the agent's streams, then frees the agent: one whose Next runs on another
// goroutine is canceled and freed by that Next, which the call lock waits for.
func (c *agentCore) close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	streams := make([]*streamCore, 0, len(c.streams))
	for st := range c.streams {
		streams = append(streams, st)
	}
	c.mu.Unlock()
	for _, st := range streams {
		st.close()
	}
	c.call.Lock()
	defer c.call.Unlock()
	if c.native != nil {
		C.panto_agent_free(c.native)
		c.native = nil
	}
}
