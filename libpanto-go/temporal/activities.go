package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"panto.dev/panto"
)

// Sink gets a turn's events as a worker's model_request activity reads them: the workflow's
// id and the event (the local stream's vocabulary).
type Sink func(ctx context.Context, turnID string, ev panto.Event) error

// Activities are a worker's side of a turn: its tools' handlers and its sinks, by name.
type Activities struct {
	Tools map[string]panto.Tool
	Sinks map[string]Sink
}

// Register registers the workflow and both activities with w, under their names.
func Register(w worker.Registry, tools []panto.Tool, sinks map[string]Sink) {
	RegisterWorkflow(w)
	RegisterActivities(w, tools, sinks)
}

// RegisterWorkflow registers the workflow alone: its activities may run on other workers (of
// either language) on the task queue.
func RegisterWorkflow(w worker.WorkflowRegistry) {
	w.RegisterWorkflowWithOptions(TurnWorkflow, workflow.RegisterOptions{Name: WorkflowName})
}

// RegisterActivities registers both activities alone, with the worker's tools and sinks.
func RegisterActivities(w worker.ActivityRegistry, tools []panto.Tool, sinks map[string]Sink) {
	a := &Activities{Tools: map[string]panto.Tool{}, Sinks: sinks}
	for _, t := range tools {
		a.Tools[t.Name] = t
	}
	w.RegisterActivityWithOptions(a.ModelRequest, activity.RegisterOptions{Name: ModelRequestName})
	w.RegisterActivityWithOptions(a.ToolCall, activity.RegisterOptions{Name: ToolCallName})
}

// Failures that the same request would meet again: not retried.
var permanent = []error{panto.ErrConfig, panto.ErrConversation, panto.ErrAuthentication, panto.ErrPermission,
	panto.ErrNotFound, panto.ErrInvalidRequest, panto.ErrInvalidArgument}

func classify(err error) error {
	for _, p := range permanent {
		if errors.Is(err, p) {
			return temporal.NewNonRetryableApplicationError(err.Error(), "panto", err)
		}
	}
	return err
}

// ModelRequest is the activity "panto.model_request": one model request, with manual tools
// and panto's retries off, until the model asks for host tools or the message ends.
func (a *Activities) ModelRequest(ctx context.Context, req modelRequest) (modelOutput, error) {
	config, err := withoutRetries(req.Config)
	if err != nil {
		return modelOutput{}, temporal.NewNonRetryableApplicationError(err.Error(), "config", err)
	}
	var sink Sink
	if req.Sink != nil {
		if sink = a.Sinks[*req.Sink]; sink == nil {
			return modelOutput{}, temporal.NewNonRetryableApplicationError("no sink named "+*req.Sink+" on this worker", "NoSuchSink", nil)
		}
	}
	info := activity.GetInfo(ctx)
	published := 0
	if activity.HasHeartbeatDetails(ctx) {
		_ = activity.GetHeartbeatDetails(ctx, &published) // a retry does not publish again
	}
	agent, err := panto.NewAgentJSON(config)
	if err != nil {
		return modelOutput{}, classify(err)
	}
	defer agent.Close()
	doc, err := json.Marshal(req.Conversation)
	if err != nil {
		return modelOutput{}, err
	}
	if err := agent.Import(doc); err != nil {
		return modelOutput{}, classify(err)
	}
	before := len(req.Conversation.Messages)
	// The stream's context is not ctx: a cancel is read from it below, and ends the stream
	// the close policy's way (the partial message kept).
	var stream *panto.Stream
	if req.Input != nil {
		stream, err = agent.Run(context.WithoutCancel(ctx), *req.Input, panto.WithManualTools())
	} else {
		stream, err = agent.Continue(context.WithoutCancel(ctx), panto.WithManualTools())
	}
	if err != nil {
		return modelOutput{}, classify(err)
	}
	out := modelOutput{Pending: []PendingCall{}, Asked: []AskedCall{}, Denial: []string{}}
	count := 0
	stop := heartbeats(ctx, func() int { return count })
	canceled := context.AfterFunc(ctx, stream.Cancel)
	for stream.Next() {
		ev := stream.Event()
		count++
		if ev.Kind == panto.EventToolCallStart && ev.AwaitingResult {
			out.Pending = append(out.Pending, PendingCall{ID: ev.ID, Name: ev.Name, Input: json.RawMessage(ev.Text), Sequential: ev.Sequential})
		}
		if sink != nil && count > published {
			if err := sink(ctx, info.WorkflowExecution.ID, ev); err != nil {
				stream.Cancel()
			}
		}
		activity.RecordHeartbeat(ctx, count)
	}
	canceled()
	stop()
	err = stream.Err()
	if errors.Is(err, panto.ErrResultPending) || errors.Is(err, panto.ErrApprovalPending) {
		// Calls that wait for a person: denied with the mark, the workflow waits for the answers.
		for _, c := range stream.Approvals() {
			if derr := stream.Deny(c.ID, DenialMark); derr != nil {
				stream.Close()
				return modelOutput{}, derr
			}
			out.Asked = append(out.Asked, AskedCall{ID: c.ID, Name: c.Name, Input: c.Input})
		}
	}
	stream.Close()
	switch {
	case err == nil, errors.Is(err, panto.ErrResultPending), errors.Is(err, panto.ErrApprovalPending):
	case ctx.Err() != nil && errors.Is(err, panto.ErrCanceled):
		out.Canceled, out.Pending = true, []PendingCall{}
	default:
		return modelOutput{}, classify(err)
	}
	exported, err := agent.Export()
	if err != nil {
		return modelOutput{}, err
	}
	var conv Conversation
	if err := json.Unmarshal(exported, &conv); err != nil {
		return modelOutput{}, err
	}
	out.Added = conv.Messages[before:]
	if len(out.Asked) > 0 {
		if out.Denial, err = denial(out.Added[len(out.Added)-1], out.Asked[0].ID); err != nil {
			return modelOutput{}, err
		}
	}
	return out, nil
}

// denial is the core's denial text before and after DenialMark, from the result of the call
// id (denied with the mark) in the round's results message.
func denial(results json.RawMessage, id string) ([]string, error) {
	var m struct {
		Content []struct {
			Type    string          `json:"type"`
			ID      string          `json:"id"`
			Content json.RawMessage `json:"content"`
		} `json:"content"`
	}
	if err := json.Unmarshal(results, &m); err != nil {
		return nil, err
	}
	for _, b := range m.Content {
		var text string
		if b.Type == "tool_result" && b.ID == id && json.Unmarshal(b.Content, &text) == nil {
			before, after, _ := strings.Cut(text, DenialMark)
			return []string{before, after}, nil
		}
	}
	return nil, temporal.NewNonRetryableApplicationError("the denied call "+id+" has no result", "ConversationError", nil)
}

// ToolCall is the activity "panto.tool_call": one call, run by the worker's handler; a
// handler's error is an error result, as panto's own runner gives it.
func (a *Activities) ToolCall(ctx context.Context, call PendingCall) (ToolResult, error) {
	tool, ok := a.Tools[call.Name]
	if !ok || tool.Handler == nil {
		return ToolResult{Content: fmt.Sprintf("no tool %q on this worker", call.Name), IsError: true}, nil
	}
	stop := heartbeats(ctx, func() int { return 0 })
	defer stop()
	content, err := runHandler(ctx, tool, call.Input)
	if err != nil {
		return ToolResult{Content: err.Error(), IsError: true}, nil
	}
	return ToolResult{Content: content}, nil
}

func runHandler(ctx context.Context, tool panto.Tool, input json.RawMessage) (content string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return tool.Handler(ctx, input)
}

// heartbeats heartbeats every second until stop: a dead worker is noticed by the heartbeat
// timeout, and a cancel reaches the activity (in a heartbeat's answer).
func heartbeats(ctx context.Context, count func() int) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			activity.RecordHeartbeat(ctx, count())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done) }
}

// withoutRetries is config with panto's own retries off, unless it sets "retry": Temporal's
// retry policy is the one that counts.
func withoutRetries(config json.RawMessage) ([]byte, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(config, &keys); err != nil {
		return nil, err
	}
	if _, ok := keys["retry"]; !ok {
		keys["retry"] = json.RawMessage(`{"max_retries":0}`)
	}
	return json.Marshal(keys)
}
