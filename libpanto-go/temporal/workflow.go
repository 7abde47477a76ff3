package temporal

import (
	"encoding/json"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// TurnWorkflow is the workflow "panto.turn": the conversation is its state; each model
// request and each tool call an activity. A cancel waits for the activity in flight, which
// keeps what the model had said as an "aborted" message; the workflow then ends canceled and
// its query "conversation" gives the conversation it left.
func TurnWorkflow(ctx workflow.Context, turn Turn) (Result, error) {
	messages := append([]json.RawMessage{}, turn.Conversation.Messages...)
	conversation := func() Conversation { return Conversation{Version: 1, Messages: messages} }
	if err := workflow.SetQueryHandler(ctx, QueryName, func() (Conversation, error) { return conversation(), nil }); err != nil {
		return Result{}, err
	}
	// The round whose calls wait for a person, and the signals that answer them.
	var current *round
	if err := workflow.SetQueryHandler(ctx, ApprovalsQueryName, func() ([]AskedCall, error) {
		if current == nil {
			return []AskedCall{}, nil
		}
		return current.waiting(), nil
	}); err != nil {
		return Result{}, err
	}
	for _, name := range []string{ApproveSignalName, DenySignalName} {
		name, ch, approve := name, workflow.GetSignalChannel(ctx, name), name == ApproveSignalName
		workflow.Go(ctx, func(ctx workflow.Context) {
			for {
				// A signal's argument is anyone's JSON: one that is not an Answer is ignored (a
				// decoding panic would fail the workflow task again and again).
				var raw json.RawMessage
				if !ch.Receive(ctx, &raw) {
					return
				}
				var a Answer
				if err := json.Unmarshal(raw, &a); err != nil {
					workflow.GetLogger(ctx).Warn("a signal that is not an answer: ignored", "signal", name, "argument", string(raw))
					continue
				}
				if current != nil {
					current.answer(ctx, a, approve)
				}
			}
		})
	}
	var cfg struct {
		Timeouts struct {
			TotalMS float64 `json:"total_ms"`
		} `json:"timeouts"`
	}
	_ = json.Unmarshal(turn.Config, &cfg)
	modelCtx := workflow.WithActivityOptions(ctx, activityOptions(turn.ModelRequest, cfg.Timeouts.TotalMS))
	toolCtx := workflow.WithActivityOptions(ctx, activityOptions(turn.ToolCall, 0))
	// The model request is waited for on a context a cancel does not end: the activity
	// returns what it kept.
	waitCtx, _ := workflow.NewDisconnectedContext(ctx)
	input := &turn.Input
	for {
		var out modelOutput
		req := modelRequest{Config: turn.Config, Conversation: conversation(), Input: input, Sink: turn.Sink}
		err := workflow.ExecuteActivity(modelCtx, ModelRequestName, req).Get(waitCtx, &out)
		if err != nil {
			return Result{}, err
		}
		input = nil // later requests answer the conversation as it is
		messages = append(messages, out.Added...)
		if out.Canceled || ctx.Err() != nil {
			return Result{}, temporal.NewCanceledError()
		}
		if len(out.Pending) == 0 && len(out.Asked) == 0 {
			return Result{Conversation: conversation(), StopReason: stopReason(messages)}, nil
		}
		r := &round{asked: out.Asked, answers: map[string]*string{}, done: map[string]bool{}}
		current = r
		err = r.run(ctx, toolCtx, out.Pending, out.Denial, func(results map[string]ToolResult) error {
			// The close policy gave the pending calls an error result: theirs replace it.
			last, err := withResults(messages[len(messages)-1], results)
			if err == nil {
				messages[len(messages)-1] = last
			}
			return err
		})
		current = nil
		if err != nil {
			return Result{}, err
		}
	}
}

// round is a tool round's calls that wait for a person, and their answers (nil: approved).
type round struct {
	asked   []AskedCall
	answers map[string]*string
	done    map[string]bool // the calls whose results are in
}

func (r *round) waiting() []AskedCall {
	calls := []AskedCall{}
	for _, c := range r.asked {
		if _, ok := r.answers[c.ID]; !ok {
			calls = append(calls, c)
		}
	}
	return calls
}

func (r *round) answer(ctx workflow.Context, a Answer, approve bool) {
	logger := workflow.GetLogger(ctx)
	if !approve && a.Reason == "" {
		logger.Warn("a deny without a reason: ignored", "call_id", a.CallID)
		return
	}
	for _, c := range r.waiting() {
		if c.ID == a.CallID {
			var reason *string
			if !approve {
				reason = &a.Reason
			}
			r.answers[c.ID] = reason
			return
		}
	}
	logger.Warn("an answer for a call that does not wait: ignored", "call_id", a.CallID)
}

// run runs the round's host calls, waits for the asked calls' answers, runs the approved ones
// (one at a time: an approval does not say which may run together) and writes the denials.
// A cancel gives each asked call that did not run the denial canceledWaiting.
func (r *round) run(ctx, toolCtx workflow.Context, pending []PendingCall, denial []string, replace func(map[string]ToolResult) error) error {
	write := func(results map[string]ToolResult) error {
		for id := range results {
			r.done[id] = true
		}
		return replace(results)
	}
	err := func() error {
		results, err := runTools(toolCtx, pending)
		if err != nil {
			return err
		}
		if err := write(results); err != nil {
			return err
		}
		if len(r.asked) == 0 {
			return nil
		}
		if err := workflow.Await(ctx, func() bool { return len(r.answers) == len(r.asked) }); err != nil {
			return err
		}
		denied := map[string]ToolResult{}
		for id, reason := range r.answers {
			if reason != nil {
				denied[id] = denialResult(denial, *reason)
			}
		}
		if err := write(denied); err != nil {
			return err
		}
		for _, c := range r.asked {
			if r.answers[c.ID] == nil {
				results, err := runTools(toolCtx, []PendingCall{{ID: c.ID, Name: c.Name, Input: c.Input, Sequential: true}})
				if err != nil {
					return err
				}
				if err := write(results); err != nil {
					return err
				}
			}
		}
		return nil
	}()
	if err != nil && ctx.Err() != nil {
		left := map[string]ToolResult{}
		for _, c := range r.asked {
			if !r.done[c.ID] {
				left[c.ID] = denialResult(denial, canceledWaiting)
			}
		}
		if werr := replace(left); werr != nil {
			return werr
		}
		return temporal.NewCanceledError()
	}
	return err
}

// The reason an asked call that did not run is denied with when the turn is canceled.
const canceledWaiting = "the turn was canceled before this call ran"

func denialResult(denial []string, reason string) ToolResult {
	return ToolResult{Content: denial[0] + reason + denial[1], IsError: true}
}

// runTools runs each call as an activity: the calls between two sequential ones at the same
// time, a sequential one alone, as panto's own tool runner does.
func runTools(ctx workflow.Context, calls []PendingCall) (map[string]ToolResult, error) {
	results := map[string]ToolResult{}
	var group []PendingCall
	flush := func() error {
		futures := make([]workflow.Future, len(group))
		for i, c := range group {
			futures[i] = workflow.ExecuteActivity(ctx, ToolCallName, c)
		}
		for i, f := range futures {
			var r ToolResult
			if err := f.Get(ctx, &r); err != nil {
				return err
			}
			results[group[i].ID] = r
		}
		group = group[:0]
		return nil
	}
	for _, c := range calls {
		if c.Sequential {
			if err := flush(); err != nil {
				return nil, err
			}
		}
		group = append(group, c)
		if c.Sequential {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	return results, flush()
}

// withResults is the user message msg with the tool_result blocks of results' ids replaced.
func withResults(msg json.RawMessage, results map[string]ToolResult) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(msg, &m); err != nil {
		return nil, err
	}
	var blocks []map[string]any
	if err := json.Unmarshal(m["content"], &blocks); err != nil {
		return nil, err
	}
	for _, b := range blocks {
		if id, _ := b["id"].(string); b["type"] == "tool_result" {
			if r, ok := results[id]; ok {
				b["content"], b["is_error"] = r.Content, r.IsError
			}
		}
	}
	content, err := json.Marshal(blocks)
	if err != nil {
		return nil, err
	}
	m["content"] = content
	return json.Marshal(m)
}

func stopReason(messages []json.RawMessage) string {
	for i := len(messages) - 1; i >= 0; i-- {
		var m struct {
			Role       string `json:"role"`
			StopReason string `json:"stop_reason"`
		}
		if json.Unmarshal(messages[i], &m) == nil && m.Role == "assistant" {
			return m.StopReason
		}
	}
	return "none"
}

func activityOptions(o ActivityOptions, totalMS float64) workflow.ActivityOptions {
	seconds := func(v, def float64) time.Duration {
		if v <= 0 {
			v = def
		}
		return time.Duration(v * float64(time.Second))
	}
	def := 600.0
	if totalMS > 0 {
		def = totalMS / 1000
	}
	return workflow.ActivityOptions{
		StartToCloseTimeout: seconds(o.StartToCloseSeconds, def),
		HeartbeatTimeout:    seconds(o.HeartbeatSeconds, 30),
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: seconds(o.InitialIntervalSeconds, 1),
			MaximumAttempts: o.MaximumAttempts,
		},
		WaitForCancellation: true,
	}
}
