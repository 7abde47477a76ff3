package main

import (
	"encoding/json"
	"errors"
	"os"
	"syscall"

	"panto.dev/panto"
)

// The case's "approvals": per call id, "approve" or {"deny": REASON}.
var caseApprovals map[string]json.RawMessage

// answerApprovals answers, when Next stopped for approvals (ErrApprovalPending), every call
// waiting as the case says (a call it does not name is denied: "no answer in the case"),
// printing an approval_answer line for each; true: read on.
func answerApprovals(stream *panto.Stream, emit func(map[string]any)) bool {
	if !errors.Is(stream.Err(), panto.ErrApprovalPending) {
		return false
	}
	waiting := stream.Approvals()
	for _, c := range waiting {
		var how string
		var deny struct {
			Deny *string `json:"deny"`
		}
		raw := caseApprovals[c.ID]
		_ = json.Unmarshal(raw, &how)
		_ = json.Unmarshal(raw, &deny)
		if how == "kill" { // the process dies waiting (README.md, "A process killed while a call waits")
			emit(map[string]any{"event": "killed"})
			os.Stdout.Sync()
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
		var err error
		answer := "deny"
		if how == "approve" {
			answer = "approve"
			err = stream.Approve(c.ID)
		} else {
			reason := "no answer in the case"
			if deny.Deny != nil {
				reason = *deny.Deny
			}
			err = stream.Deny(c.ID, reason)
		}
		emit(map[string]any{"event": "approval_answer", "id": c.ID, "answer": answer, "code": statusName(err)})
	}
	return len(waiting) > 0
}
