package panto

import (
	"encoding/json"
	"fmt"
	"time"
)

// Thinking is how much the model thinks before it answers: Anthropic extended thinking
// with a budget of 1024, 2048, 8192 or 16384 tokens (max_tokens is raised above the
// budget when needed), OpenAI's reasoning_effort of the same name.
type Thinking string

const (
	ThinkingOff     Thinking = "off" // the default
	ThinkingMinimal Thinking = "minimal"
	ThinkingLow     Thinking = "low"
	ThinkingMedium  Thinking = "medium"
	ThinkingHigh    Thinking = "high"
)

// NoRetries as RetryPolicy.MaxRetries turns retries off.
const NoRetries = -1

// NoTimeout as a field of Timeouts turns that timeout off.
const NoTimeout time.Duration = -1

// RetryPolicy says when a failed provider request is sent again: on HTTP 408, 409, 429 and
// 5xx answers, on connection failures, and on an error event or a dropped connection
// before any content of the message was delivered, after a backoff of
// InitialDelay·2ⁿ capped at MaxDelay, with jitter. A provider's retry-after-ms or
// Retry-After is honored up to MaxRetryAfter (beyond it, the error is returned), and its
// x-should-retry too.
//
// As in net/http.Server's timeouts, a zero field means the library's default (in a
// ConfigPatch: unchanged) and a negative one means none: NoRetries for MaxRetries, a
// delay of 0, never waiting for a provider's retry-after. Durations are rounded up to
// whole milliseconds.
type RetryPolicy struct {
	MaxRetries    int           // default 2
	InitialDelay  time.Duration // default 500ms
	MaxDelay      time.Duration // default 8s
	MaxRetryAfter time.Duration // default 60s
}

// MarshalJSON writes the object panto_agent_new reads ({"max_retries": 2,
// "initial_delay_ms": 500, ...}), leaving out the zero fields.
func (p RetryPolicy) MarshalJSON() ([]byte, error) {
	m := map[string]int64{}
	switch {
	case p.MaxRetries > 0:
		m["max_retries"] = int64(p.MaxRetries)
	case p.MaxRetries < 0:
		m["max_retries"] = 0
	}
	putMillis(m, "initial_delay_ms", p.InitialDelay)
	putMillis(m, "max_delay_ms", p.MaxDelay)
	putMillis(m, "max_retry_after_ms", p.MaxRetryAfter)
	return json.Marshal(m)
}

// Timeouts bound the wait for the provider; each one that passes ends the turn with
// ErrTimeout (type "timeout_error"). A zero field means the library's default (in a
// ConfigPatch: unchanged), NoTimeout (any negative value) turns it off. Durations are
// rounded up to whole milliseconds.
type Timeouts struct {
	// Connect bounds opening a connection: the TCP connect, a proxy's CONNECT tunnel and the
	// TLS handshake. Default 10s.
	Connect time.Duration
	// FirstByte runs from sending a request (once connected) to its response head. Default 60s.
	FirstByte time.Duration
	// Idle is the longest pause between two events that carry progress (pings and SSE
	// comments do not). Default 90s.
	Idle time.Duration
	// Total bounds all the provider calls of one turn. Default 10 minutes.
	Total time.Duration
}

// MarshalJSON writes the object panto_agent_new reads ({"first_byte_ms": 60000, ...}),
// leaving out the zero fields.
func (t Timeouts) MarshalJSON() ([]byte, error) {
	m := map[string]int64{}
	putMillis(m, "connect_ms", t.Connect)
	putMillis(m, "first_byte_ms", t.FirstByte)
	putMillis(m, "idle_ms", t.Idle)
	putMillis(m, "total_ms", t.Total)
	return json.Marshal(m)
}

// NoKeepAlive as KeepAlive.Idle keeps no connection alive.
const NoKeepAlive time.Duration = -1

// KeepAlive says how long a connection stays open between the agent's requests (the tool
// rounds of a turn, later turns), which then share it. HTTPS through a proxy keeps its
// CONNECT tunnel alive the same way. Agent.Connections counts the connections opened and
// reused.
type KeepAlive struct {
	// Idle is how long a connection may stay unused and still carry the next request: one
	// idle longer is closed; one the server closed meanwhile is replaced silently. Zero: the
	// library's default, 60s (in a ConfigPatch: unchanged). NoKeepAlive (any negative value)
	// keeps none: each request opens its own connection, closed after its response. Rounded
	// up to whole milliseconds.
	Idle time.Duration
}

// MarshalJSON writes the object panto_agent_new reads ({"idle_ms": 60000}), leaving out
// a zero Idle.
func (k KeepAlive) MarshalJSON() ([]byte, error) {
	m := map[string]int64{}
	putMillis(m, "idle_ms", k.Idle)
	return json.Marshal(m)
}

// putMillis sets key to d in milliseconds, rounded up; 0 for a negative d; nothing for 0.
func putMillis(m map[string]int64, key string, d time.Duration) {
	switch {
	case d > 0:
		m[key] = int64((d + time.Millisecond - 1) / time.Millisecond)
	case d < 0:
		m[key] = 0
	}
}

// ConfigPatch holds the changes Agent.SetConfig makes; what it leaves at the zero value
// stays as it is. Strings whose empty value means something are pointers (Ptr makes one):
// a pointer to "" goes back to the default (the provider's endpoint, the key from the
// environment, no system prompt). A Provider switch takes BaseURL and APIKey from the new
// provider's variables too, unless they were given (docs/requests.md, "A provider switch").
type ConfigPatch struct {
	Provider string  // "anthropic", "openai", "openai-responses", "gemini" or "bedrock"
	Model    string  //
	BaseURL  *string // "": $ANTHROPIC_BASE_URL or $OPENAI_BASE_URL, else the public endpoint
	APIKey   *string // "": $ANTHROPIC_API_KEY or $OPENAI_API_KEY
	System   *string // "": no system prompt

	MaxTokens int
	// Capabilities replaces the granted capabilities when not nil (an empty, non-nil
	// slice revokes them all).
	Capabilities      []string
	MaxToolIterations *int
	// ReadTool enables the native read tool, or changes its settings; RemoveReadTool
	// disables it.
	ReadTool       *ReadToolConfig
	RemoveReadTool bool

	Thinking       Thinking
	ThinkingBudget int // Anthropic's budget in tokens instead of a level
	// Params set the request parameters it holds (not zero); Unset resets others.
	Params
	// Unset lists config keys to reset to their defaults (sent as null), e.g.
	// []string{"temperature", "top_k"}: also what a switch of provider needs for a
	// parameter the new one does not have.
	Unset         []string
	ToolExecution ToolExecution
	Log           *Log
	// Retry, Timeouts and KeepAlive change the fields they set (not zero) and keep the
	// others.
	Retry     *RetryPolicy
	Timeouts  *Timeouts
	KeepAlive *KeepAlive
	// Compaction changes the fields it sets (not zero), and turns compaction on or off
	// (Disabled). A session cannot be changed: it is chosen when the agent is made.
	Compaction *Compaction
	// ModelInfo replaces the config's model_info (Unset "model_info" drops it).
	ModelInfo *ModelInfo
	// Budget changes the budgets it sets (not nil) and keeps the others.
	Budget *Budget
}

// MarshalJSON writes the JSON object panto_agent_set_config takes: only the keys to change.
func (p ConfigPatch) MarshalJSON() ([]byte, error) {
	if p.ReadTool != nil && p.RemoveReadTool {
		return nil, fmt.Errorf("panto: a ConfigPatch cannot both set ReadTool and RemoveReadTool")
	}
	m := map[string]any{}
	if p.Provider != "" {
		m["provider"] = p.Provider
	}
	if p.Model != "" {
		m["model"] = p.Model
	}
	optString := func(key string, v *string) {
		switch {
		case v == nil:
		case *v == "":
			m[key] = nil
		default:
			m[key] = *v
		}
	}
	optString("base_url", p.BaseURL)
	optString("api_key", p.APIKey)
	optString("system", p.System)
	if p.MaxTokens != 0 {
		m["max_tokens"] = p.MaxTokens
	}
	if p.Capabilities != nil {
		m["capabilities"] = p.Capabilities
	}
	if p.MaxToolIterations != nil {
		m["max_tool_iterations"] = *p.MaxToolIterations
	}
	if p.ReadTool != nil {
		m["read_tool"] = p.ReadTool
	}
	if p.RemoveReadTool {
		m["read_tool"] = nil
	}
	if p.Thinking != "" {
		m["thinking"] = p.Thinking
	}
	if p.Retry != nil {
		m["retry"] = p.Retry
	}
	if p.Timeouts != nil {
		m["timeouts"] = p.Timeouts
	}
	if p.KeepAlive != nil {
		m["keep_alive"] = p.KeepAlive
	}
	if p.Compaction != nil {
		m["compaction"] = p.Compaction
	}
	if p.ToolExecution != "" {
		m["tool_execution"] = p.ToolExecution
	}
	if p.Log != nil {
		m["log"] = p.Log
	}
	if p.ModelInfo != nil {
		m["model_info"] = p.ModelInfo
	}
	if p.Budget != nil {
		m["budget"] = p.Budget
	}
	if err := mergeParams(m, p.Params); err != nil {
		return nil, err
	}
	for _, key := range p.Unset {
		if _, set := m[key]; set {
			return nil, fmt.Errorf("panto: a ConfigPatch both sets and unsets %q", key)
		}
		m[key] = nil
	}
	js, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return withThinking(js, p.Thinking, p.ThinkingBudget)
}

// mergeParams adds the parameters params sets to the object m.
func mergeParams(m map[string]any, params Params) error {
	js, err := json.Marshal(params)
	if err != nil {
		return err
	}
	var set map[string]json.RawMessage
	if err := json.Unmarshal(js, &set); err != nil {
		return err
	}
	for k, v := range set {
		m[k] = v
	}
	return nil
}

// Ptr returns a pointer to v, for the pointer fields of ConfigPatch:
//
//	agent.SetConfig(panto.ConfigPatch{System: panto.Ptr("Answer in French.")})
func Ptr[T any](v T) *T { return &v }
