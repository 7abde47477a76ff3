package panto

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Params are the request parameters (docs/requests.md has each provider's wire form), the
// same in Config, ConfigPatch and a turn's TurnOptions. A field left at its zero value is
// not sent, and the provider's default applies. A parameter the agent's provider does not
// have is refused with ErrConfig, whose message names it and the provider; the library
// checks every value (ranges, names), the binding none.
//
// Params has no JSON methods of its own: it is embedded, and its fields are keys of the
// object it is embedded in.
type Params struct {
	Temperature *float64 `json:"temperature,omitempty"` // Anthropic 0 to 1, OpenAI 0 to 2
	TopP        *float64 `json:"top_p,omitempty"`       // 0 to 1
	TopK        int      `json:"top_k,omitempty"`       // Anthropic: >= 1
	// Stop sequences (OpenAI: at most 4); Anthropic stop_sequences.
	Stop             []string `json:"stop,omitempty"`
	Seed             *int64   `json:"seed,omitempty"`              // OpenAI
	PresencePenalty  *float64 `json:"presence_penalty,omitempty"`  // OpenAI: -2 to 2
	FrequencyPenalty *float64 `json:"frequency_penalty,omitempty"` // OpenAI: -2 to 2
	// Metadata: at most 16 strings (OpenAI).
	Metadata map[string]string `json:"metadata,omitempty"`
	// User says who the end user is (Anthropic metadata.user_id, OpenAI user).
	User string `json:"user,omitempty"`
	// ParallelToolCalls: whether the model may ask for several tools in one message (OpenAI
	// parallel_tool_calls, Anthropic tool_choice.disable_parallel_tool_use); sent only with
	// tools.
	ParallelToolCalls *bool `json:"parallel_tool_calls,omitempty"`
	// ToolChoice: ToolChoiceAuto, ToolChoiceNone, ToolChoiceRequired, or UseTool(name).
	ToolChoice ToolChoice `json:"tool_choice,omitzero"`
	// ServiceTier: Anthropic "auto" | "standard_only"; OpenAI "auto" | "default" | "flex" |
	// "scale" | "priority".
	ServiceTier string `json:"service_tier,omitempty"`
	// ReasoningEffort: "minimal" | "low" | "medium" | "high" (OpenAI); wins over Thinking.
	ReasoningEffort string `json:"reasoning_effort,omitempty"`
	// InterleavedThinking: thinking between tool calls (Anthropic); nil: on when thinking is
	// on and the agent has tools.
	InterleavedThinking *bool `json:"interleaved_thinking,omitempty"`
	// ResponseFormat asks for structured output: see Parse and Stream.FinalJSON.
	ResponseFormat *ResponseFormat `json:"response_format,omitempty"`
	// Cache steers prompt caching; nil: the defaults (Anthropic: automatic breakpoints).
	Cache *Cache `json:"cache,omitempty"`
	// ExtraHeaders are sent with every request (not the headers panto writes; an
	// anthropic-beta value is added to panto's own).
	ExtraHeaders map[string]string `json:"extra_headers,omitempty"`
	// ExtraBody is merged into the request's JSON body: the escape hatch for a parameter
	// panto does not know (not a key panto writes).
	ExtraBody map[string]any `json:"extra_body,omitempty"`
	// ServerTools are Anthropic's hosted tools, each the API's tool object as it is sent
	// (ServerTool{"type": "web_search_20250305", "name": "web_search", "max_uses": 3}; web
	// fetch, code execution), added to the request's tools with the beta header its type
	// needs. Another provider refuses them with ErrConfig.
	ServerTools []ServerTool `json:"server_tools,omitempty"`
	// HostedMCPServers are the remote MCP servers Anthropic's MCP connector reaches, each the API's
	// object as it is sent (HostedMCPServer{"type": "url", "url": "https://...", "name": "docs"});
	// a ServerTool{"type": "mcp_toolset", "mcp_server_name": "docs"} offers a server's tools.
	// panto adds the connector's beta header. Another provider refuses them with ErrConfig.
	HostedMCPServers []HostedMCPServer `json:"hosted_mcp_servers,omitempty"`
}

// ServerTool is one provider-hosted tool: its JSON object, with "type" and "name" (an MCP
// toolset: "mcp_server_name" instead of "name").
type ServerTool map[string]any

// HostedMCPServer is one remote MCP server of Anthropic's MCP connector: its JSON object,
// with "type" and "name".
type HostedMCPServer map[string]any

// ToolChoice says whether and which tool the model must call. The zero ToolChoice is unset.
type ToolChoice struct {
	mode string // "auto", "none", "required"; "" with a name
	name string
}

var (
	ToolChoiceAuto     = ToolChoice{mode: "auto"}     // the model decides
	ToolChoiceNone     = ToolChoice{mode: "none"}     // no tool
	ToolChoiceRequired = ToolChoice{mode: "required"} // some tool (Anthropic "any")
)

// UseTool makes the model call the tool named name. A tool the agent may not use fails the
// turn with ErrConfig at its first request.
func UseTool(name string) ToolChoice { return ToolChoice{name: name} }

// IsZero reports an unset choice (for omitzero).
func (c ToolChoice) IsZero() bool { return c == ToolChoice{} }

// MarshalJSON writes "auto", "none", "required" or {"name": tool}.
func (c ToolChoice) MarshalJSON() ([]byte, error) {
	if c.mode != "" {
		return json.Marshal(c.mode)
	}
	return json.Marshal(map[string]string{"name": c.name})
}

// ResponseFormat is the form of the model's answer: {"type": "text"}, {"type":
// "json_object"} (OpenAI), or {"type": "json_schema", "schema", "name", "strict"}. Parse
// makes the json_schema one from a Go type.
type ResponseFormat struct {
	Type   string          `json:"type"`             // "text", "json_object" or "json_schema"
	Schema json.RawMessage `json:"schema,omitempty"` // json_schema: an object schema
	Name   string          `json:"name,omitempty"`   // json_schema: default "response"
	// json_schema: OpenAI's strict mode; nil lets the library decide (true when every object
	// requires all its properties and allows no others).
	Strict *bool `json:"strict,omitempty"`
}

// Cache steers prompt caching (docs/requests.md, "Prompt caching").
type Cache struct {
	// Mode: "auto" (the default: Anthropic breakpoints on the last tool, the system prompt
	// and the last message) or "off" (only the user messages marked WithCacheBreakpoint).
	Mode      string `json:"mode,omitempty"`
	TTL       string `json:"ttl,omitempty"`       // Anthropic: "5m" or "1h"
	Key       string `json:"key,omitempty"`       // OpenAI prompt_cache_key
	Retention string `json:"retention,omitempty"` // OpenAI: "in_memory" or "24h"
}

// ToolExecution says whether the host tool calls of one message may run at the same time.
type ToolExecution string

const (
	// ToolsParallel (the default): the stream runs every call of a message at once, but
	// those of a Sequential tool.
	ToolsParallel ToolExecution = "parallel"
	// ToolsSequential: each call runs alone, in order.
	ToolsSequential ToolExecution = "sequential"
)

// Log makes the agent write a line per request, retry decision and closed connection
// (PANTO_LOG in the environment does the same; the config wins). Never an API key or an
// authorization header; the request bodies only at level "body".
type Log struct {
	Level string `json:"level"`          // "off", "debug" or "body"
	File  string `json:"file,omitempty"` // appended to; "": stderr
}

// withThinking adds the "thinking" key of a level and an explicit budget to the JSON object
// js: the budget, {"budget_tokens": N}, is the same key as the level, so both is an error.
func withThinking(js []byte, level Thinking, budget int) ([]byte, error) {
	if budget == 0 {
		return js, nil
	}
	if level != "" {
		return nil, errors.New("panto: set Thinking or ThinkingBudget, not both")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(js, &m); err != nil {
		return nil, err
	}
	m["thinking"] = json.RawMessage(fmt.Sprintf(`{"budget_tokens":%d}`, budget))
	return json.Marshal(m)
}
