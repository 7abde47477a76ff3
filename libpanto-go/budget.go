package panto

// Budget is what one turn may spend (Config.Budget, ConfigPatch.Budget, TurnOptions.Budget):
// reaching one ends the turn normally, its EventMessageComplete with StopBudget and
// Event.BudgetKind naming it. The calls of a round it stops get the error result "Skipped:
// the turn's budget is spent." (no EventToolCallStart), and what was streamed of a message
// the wall time cut is kept (stored as StopAborted). A nil field: none (in a patch or a
// turn's options: unchanged; WithOptionsJSON's {"budget": {"wall_ms": null}} lifts one for a
// turn). MaxToolIterations and Timeouts.Total stay errors.
type Budget struct {
	// OutputTokens: the turn's output tokens, summed at each message's end.
	OutputTokens *int `json:"output_tokens,omitempty"`
	// ToolRounds: the tool rounds (and pause_turn continuations) the turn may take; 0: none.
	ToolRounds *int `json:"tool_rounds,omitempty"`
	// WallMs: milliseconds from the turn's first request.
	WallMs *int `json:"wall_ms,omitempty"`
	// CostUSD: the turn's cost in US dollars at the model's list prices (Event.Cost), summed
	// at each message's end; a model whose prices the library does not know (nor ModelInfo
	// gives) fails the turn with ErrConfig before its first request.
	CostUSD *float64 `json:"cost_usd,omitempty"`
}

// The budget a turn's MessageComplete names (Event.BudgetKind).
const (
	BudgetOutputTokens = "output_tokens"
	BudgetToolRounds   = "tool_rounds"
	BudgetWall         = "wall_ms"
	BudgetCost         = "cost_usd"
)

// BudgetKind is the budget that ended the turn (BudgetOutputTokens, BudgetToolRounds,
// BudgetWall or BudgetCost: the library names it in ProviderStopReason), or "" when none did.
func (e Event) BudgetKind() string {
	if e.Kind != EventMessageComplete || e.StopReason != StopBudget {
		return ""
	}
	return e.ProviderStopReason
}
