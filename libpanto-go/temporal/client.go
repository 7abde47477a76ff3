package temporal

import (
	"context"
	"errors"

	"go.temporal.io/sdk/client"
)

// ErrNoReason: a durable turn's denial needs a reason (the model reads it).
var ErrNoReason = errors.New("panto/temporal: a durable turn's denial needs a reason: the model reads it")

// Approvals lists the calls of the turn workflowID (its latest run) that wait for a person's
// answer: the query "approvals".
func Approvals(ctx context.Context, c client.Client, workflowID string) ([]AskedCall, error) {
	v, err := c.QueryWorkflow(ctx, workflowID, "", ApprovalsQueryName)
	if err != nil {
		return nil, err
	}
	var calls []AskedCall
	return calls, v.Get(&calls)
}

// Approve lets the waiting call callID of the turn workflowID run (the signal "approve"), from
// any process: its tool runs in the tool_call activity.
func Approve(ctx context.Context, c client.Client, workflowID, callID string) error {
	return c.SignalWorkflow(ctx, workflowID, "", ApproveSignalName, Answer{CallID: callID})
}

// Deny refuses the waiting call callID of the turn workflowID (the signal "deny"): its result
// is the error a local stream's Deny gives, "The user denied this call: REASON".
func Deny(ctx context.Context, c client.Client, workflowID, callID, reason string) error {
	if reason == "" {
		return ErrNoReason
	}
	return c.SignalWorkflow(ctx, workflowID, "", DenySignalName, Answer{CallID: callID, Reason: reason})
}
