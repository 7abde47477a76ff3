package panto

import "encoding/json"

// Compaction says when a conversation that outgrows the model's context window is
// compacted: before each request of a turn whose context is estimated past ContextWindow -
// ReserveTokens, the older messages are summarized by the model in a separate request and
// replaced by one user message holding the summary (Message.Compaction); about
// KeepRecentTokens of the most recent messages stay, and a tool call is never separated
// from its result. The turn's stream shows EventCompactionStart and EventCompactionEnd
// before the request's EventMessageStart. A summary request that fails fails the turn with
// its error, and the conversation is unchanged. Agent.Compact compacts on demand.
//
// The estimate is the last assistant message's usage (input, cache and output tokens) plus
// a token per 4 characters of what came after it (an image or a document counts 4,800
// characters). docs/conversations.md has the summarization prompt.
//
// The zero value is the library's defaults; a zero field keeps the default (in a
// ConfigPatch: unchanged, but for Disabled, which is always set).
type Compaction struct {
	// Disabled turns automatic compaction off (Agent.Compact still works).
	Disabled bool
	// ContextWindow is the model's context window in tokens. Default: the model's most
	// input tokens, from the model catalog or Config.ModelInfo; a model neither knows has
	// none, and then only Agent.Compact compacts.
	ContextWindow    int
	ReserveTokens    int    // room kept for the answer; default 16384
	KeepRecentTokens int    // how much of the end stays as it is; default 20000
	Prompt           string // the summary request's system prompt; default in docs/conversations.md
}

// MarshalJSON writes the object panto_agent_new reads ({"enabled": true,
// "context_window": 200000, ...}): "enabled" always (so a ConfigPatch that sets Compaction
// turns it back on unless Disabled), the other fields unless zero.
func (c Compaction) MarshalJSON() ([]byte, error) {
	m := map[string]any{"enabled": !c.Disabled}
	putPositive := func(key string, v int) {
		if v != 0 {
			m[key] = v
		}
	}
	putPositive("context_window", c.ContextWindow)
	putPositive("reserve_tokens", c.ReserveTokens)
	putPositive("keep_recent_tokens", c.KeepRecentTokens)
	if c.Prompt != "" {
		m["prompt"] = c.Prompt
	}
	return json.Marshal(m)
}
