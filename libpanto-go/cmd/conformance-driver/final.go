package main

import (
	"context"
	"errors"

	"panto.dev/panto"
)

// runFinal runs a turn read by a final helper (tests/conformance/README.md, "Turn objects"):
// FinalMessage or FinalJSON, one line, then the extra Next lines. false stops the case.
func runFinal(agent *panto.Agent, tn turn, extra int, emit func(map[string]any)) bool {
	stream, err := tn.run(context.Background(), agent)
	if err != nil {
		emit(errorLine(err))
		return false
	}
	defer stream.Close()
	switch tn.final {
	case "message":
		msg, err := stream.FinalMessage()
		if err != nil {
			emit(errorLine(err))
			break
		}
		emit(map[string]any{"event": "final_message", "code": "ok", "text": msg.Text(),
			"stop_reason": msg.StopReason.String(), "usage": usageLine(stream.Usage())})
	case "json":
		value, err := stream.FinalJSON()
		var perr *panto.Error
		switch {
		case err == nil:
			emit(map[string]any{"event": "final_json", "code": "ok", "value": value, "output": ""})
		case errors.As(err, &perr) && (perr.Code == panto.ErrOutput || perr.Code == panto.ErrState):
			emit(map[string]any{"event": "final_json", "code": perr.Code.String(), "value": nil,
				"output": perr.Output, "message": perr.Message})
		default:
			emit(errorLine(err))
		}
	default:
		die(`a turn's "final" is "message" or "json"`)
	}
	extraNext(stream, extra, emit)
	return true
}

// usageLine is a usage as the transcript has it.
// The server tools' counts only when not 0 (the transcripts' rule).
func usageLine(u panto.Usage) map[string]int64 {
	line := map[string]int64{
		"input_tokens":       u.InputTokens,
		"output_tokens":      u.OutputTokens,
		"cache_read_tokens":  u.CacheReadTokens,
		"cache_write_tokens": u.CacheWriteTokens,
		"reasoning_tokens":   u.ReasoningTokens,
	}
	if u.WebSearchRequests != 0 {
		line["web_search_requests"] = u.WebSearchRequests
	}
	if u.WebFetchRequests != 0 {
		line["web_fetch_requests"] = u.WebFetchRequests
	}
	return line
}
