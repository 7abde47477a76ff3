package panto

import (
	"encoding/json"
)

// TurnOptions override the configuration for one turn (WithOptions): every request of the
// turn uses them, the compaction's summary request included; the agent's configuration is
// unchanged. The library refuses them as it refuses a SetConfig (ErrConfig from Run; the
// conversation unchanged).
type TurnOptions struct {
	Params
	Thinking       Thinking
	ThinkingBudget int     // Anthropic's budget in tokens instead of a level
	MaxTokens      int     // 0: the agent's
	System         *string // nil: the agent's system prompt; "": none for this turn
	// CacheBreakpoint marks the user message as a prompt-cache breakpoint (Anthropic); the
	// mark stays in the conversation (its export has "cache": true on the message).
	CacheBreakpoint bool
	// Budget changes the agent's budgets it sets (not nil) for this turn.
	Budget *Budget
}

// MarshalJSON writes the object PantoInput.options takes.
func (o TurnOptions) MarshalJSON() ([]byte, error) {
	m := map[string]any{}
	if err := mergeParams(m, o.Params); err != nil {
		return nil, err
	}
	if o.Thinking != "" {
		m["thinking"] = o.Thinking
	}
	if o.MaxTokens != 0 {
		m["max_tokens"] = o.MaxTokens
	}
	if o.System != nil {
		m["system"] = *o.System
	}
	if o.CacheBreakpoint {
		m["cache_breakpoint"] = true
	}
	if o.Budget != nil {
		m["budget"] = o.Budget
	}
	js, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return withThinking(js, o.Thinking, o.ThinkingBudget)
}

// WithOptions runs the turn with per-turn options:
//
//	stream, err := agent.Run(ctx, "Be brief.", panto.WithOptions(panto.TurnOptions{
//		Params:    panto.Params{Temperature: panto.Ptr(0.2)},
//		MaxTokens: 256,
//	}))
//
// A later WithOptions or WithOptionsJSON of the same Run replaces it.
func WithOptions(o TurnOptions) RunOption {
	return func(r *runOptions) {
		r.options, r.optionsErr = json.Marshal(o)
	}
}

// WithOptionsJSON runs the turn with per-turn options given as the JSON object
// PantoInput.options takes: it reaches keys TurnOptions does not have.
func WithOptionsJSON(options []byte) RunOption {
	return func(r *runOptions) { r.options, r.optionsErr = options, nil }
}
