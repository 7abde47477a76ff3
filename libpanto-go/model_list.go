package panto

/*
#include "panto.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"fmt"
)

// ModelEntry is a model the provider lists for the account (Agent.ListModels).
type ModelEntry struct {
	// ID is the provider's id for it, as Config.Model takes it.
	ID string `json:"id"`
	// DisplayName is the provider's name for people; "" when it gives none.
	DisplayName string `json:"display_name"`
	// Created is when the provider released it, RFC 3339 ("2025-09-29T00:00:00Z"); "" when
	// it does not say.
	Created string `json:"created"`
	// Info is what the model catalog says of it; nil when the catalog does not list it.
	Info *KnownModel `json:"model_info"`
}

// ListModels is the models the provider lists for the account, every page, in its order, each
// with what the model catalog says of it:
//
//	models, err := agent.ListModels(ctx)
//
// Anthropic and OpenAI (and OpenAI-compatible servers) GET /v1/models, Gemini GET
// /v1beta/models, Bedrock ListFoundationModels (the control plane, bedrock.REGION, or
// AWS_ENDPOINT_URL_BEDROCK). The call blocks until the last page (ctx is checked before it,
// not during: the agent's timeouts bound each page); a failed request returns the *Error a
// turn's would (ErrAuthentication, ErrRateLimit, ...), and ErrBusy while a stream of the agent
// is unfinished.
func (a *Agent) ListModels(ctx context.Context) ([]ModelEntry, error) {
	if ctx != nil && ctx.Err() != nil {
		return nil, contextError(ctx)
	}
	js, err := a.c.jsonOf(func(native *C.PantoAgent, out *C.PantoString) C.int {
		return C.panto_agent_list_models(native, out)
	})
	if err != nil {
		return nil, err
	}
	var models []ModelEntry
	if err := json.Unmarshal(js, &models); err != nil {
		panic(fmt.Sprintf("panto: the library's model list does not read: %v", err))
	}
	return models, nil
}
