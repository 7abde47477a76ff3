package main

import "panto.dev/panto"

// steerEntry is one entry of the case's "steer" (README.md, "Steering in a case"): once the
// event After (or "run") was printed, Steer or FollowUp says the text.
type steerEntry struct {
	After    string  `json:"after"`
	Steer    *string `json:"steer"`
	FollowUp *string `json:"follow_up"`
	Withdraw bool    `json:"withdraw"`
}

// The case's "steer", taken in order.
var caseSteers []steerEntry

// steerAfter says what the case's "steer" gives once `after` was printed, a steer_call line
// each.
func steerAfter(stream *panto.Stream, after string, emit func(map[string]any)) {
	for len(caseSteers) > 0 && caseSteers[0].After == after {
		entry := caseSteers[0]
		caseSteers = caseSteers[1:]
		if entry.Withdraw {
			taken, err := stream.WithdrawQueued()
			messages := []map[string]any{}
			for _, m := range taken {
				messages = append(messages, map[string]any{"source": m.Source, "text": m.Text})
			}
			emit(map[string]any{"event": "withdraw_call", "messages": messages, "code": statusName(err)})
			continue
		}
		call, text, err := "follow_up", "", error(nil)
		if entry.Steer != nil {
			call, text = "steer", *entry.Steer
			err = stream.Steer(text)
		} else if entry.FollowUp != nil {
			text = *entry.FollowUp
			err = stream.FollowUp(text)
		}
		emit(map[string]any{"event": "steer_call", "call": call, "text": text, "code": statusName(err)})
	}
}
