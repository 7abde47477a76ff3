// Package temporal runs panto turns as Temporal workflows (docs/durable.md): the workflow
// "panto.turn", whose model requests ("panto.model_request") and tool calls
// ("panto.tool_call") are activities. Names and JSON are those of Python's panto.temporal, so
// workers of either language serve the same task queue.
package temporal

import (
	"encoding/json"
	"errors"
)

// The names the workflow and its activities are registered under.
const (
	WorkflowName     = "panto.turn"
	ModelRequestName = "panto.model_request"
	ToolCallName     = "panto.tool_call"
	QueryName        = "conversation"
	// The query that lists the calls waiting for a person's answer, and the signals that
	// answer them (an Answer each).
	ApprovalsQueryName = "approvals"
	ApproveSignalName  = "approve"
	DenySignalName     = "deny"
)

// DenialMark is the reason the model_request activity denies a call that waits for approval
// with, to learn the core's wording around a reason (Python's panto.temporal uses the same).
const DenialMark = "<panto.durable.reason>"

// AskedCall is a call that waits for a person's answer: what the query "approvals" lists.
type AskedCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// Answer is the signals' argument: "approve" takes CallID, "deny" CallID and a Reason (not
// empty: the model reads it; a deny without one is ignored).
type Answer struct {
	CallID string `json:"call_id"`
	Reason string `json:"reason,omitempty"`
}

// ActivityOptions are Temporal's options of one activity kind; zero values take the defaults
// (start-to-close: the config's timeouts.total_ms, else 600 s; heartbeat 30 s; no attempt
// limit; a first retry after 1 s).
type ActivityOptions struct {
	StartToCloseSeconds    float64 `json:"start_to_close_seconds,omitempty"`
	HeartbeatSeconds       float64 `json:"heartbeat_seconds,omitempty"`
	MaximumAttempts        int32   `json:"maximum_attempts,omitempty"`
	InitialIntervalSeconds float64 `json:"initial_interval_seconds,omitempty"`
}

// Conversation is panto's exported form, version 1 (Agent.Export, Agent.Import).
type Conversation struct {
	Version  int               `json:"version"`
	Messages []json.RawMessage `json:"messages"`
}

// Turn is the workflow's argument: a turn of Input on Conversation with the agent Config (the
// JSON panto_agent_new takes, without "api_key": each worker's agent takes its key from the
// environment).
type Turn struct {
	Config       json.RawMessage `json:"config"`
	Input        string          `json:"input"`
	Conversation Conversation    `json:"conversation"`
	Sink         *string         `json:"sink"`
	ModelRequest ActivityOptions `json:"model_request"`
	ToolCall     ActivityOptions `json:"tool_call"`
}

// Result is the workflow's result: the conversation after the turn, and its last assistant
// message's stop reason.
type Result struct {
	Conversation Conversation `json:"conversation"`
	StopReason   string       `json:"stop_reason"`
}

// ErrAPIKey: a configuration holding "api_key", which would be written into the history.
var ErrAPIKey = errors.New("panto/temporal: api_key does not go into a workflow's history: set it in the workers' environment")

// NewTurn is the workflow's argument for a turn of input on an empty conversation.
func NewTurn(config json.RawMessage, input string) (Turn, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(config, &keys); err != nil {
		return Turn{}, err
	}
	if _, ok := keys["api_key"]; ok {
		return Turn{}, ErrAPIKey
	}
	return Turn{Config: config, Input: input, Conversation: Conversation{Version: 1, Messages: []json.RawMessage{}}}, nil
}

// modelRequest is the model_request activity's argument; Input nil: continue.
type modelRequest struct {
	Config       json.RawMessage `json:"config"`
	Conversation Conversation    `json:"conversation"`
	Input        *string         `json:"input"`
	Sink         *string         `json:"sink"`
}

// PendingCall is a host tool call that awaits a result: the tool_call activity's argument.
type PendingCall struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Input      json.RawMessage `json:"input"`
	Sequential bool            `json:"sequential"`
}

type modelOutput struct {
	Added    []json.RawMessage `json:"added"`
	Pending  []PendingCall     `json:"pending"`
	Canceled bool              `json:"canceled"`
	// The calls that wait for approval, denied with DenialMark, and the core's denial text
	// before and after the mark (empty when none was asked).
	Asked  []AskedCall `json:"asked"`
	Denial []string    `json:"denial"`
}

// ToolResult is the tool_call activity's result.
type ToolResult struct {
	Content string `json:"content"`
	IsError bool   `json:"is_error"`
}
