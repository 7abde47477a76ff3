package panto

/*
#include "panto.h"
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"unsafe"
)

// KnownModel is what panto knows of a model (LookupModel, Agent.ModelInfo): its limits, list
// prices and abilities from the model catalog (litellm's model table, pinned), with the
// config's ModelInfo over them for an agent's model. An unknown limit is 0 and an unknown
// price nil, never a guess; the abilities are all set. Its ModelInfo is what
// Config.ModelInfo takes.
type KnownModel struct {
	// Name is the catalog's (the undated alias a dated name was found by), or the name asked.
	Name string `json:"name"`
	ModelInfo
	// Catalog is the catalog's source ("litellm 1.110.2"); "" when only the config's
	// ModelInfo knows the model.
	Catalog string `json:"catalog"`
}

// LookupModel is what the model catalog says of provider's model (a provider name as
// Config.Provider takes it; a dated name finds its alias), nil when it does not list it.
func LookupModel(provider, model string) *KnownModel {
	buf := make([]byte, 2048)
	for {
		var n C.size_t
		rc := C.panto_model_info(pantoString(provider), pantoString(model), (*C.char)(unsafe.Pointer(unsafe.SliceData(buf))), C.size_t(len(buf)), &n)
		if rc < 0 { // only for a NULL argument, which is never passed
			panic(fmt.Sprintf("panto_model_info returned %d", int(rc)))
		}
		if int(n) <= len(buf) {
			return knownModel(buf[:n])
		}
		buf = make([]byte, int(n))
	}
}

// ModelInfo is what panto knows of the agent's model as its requests see it: the catalog's
// entry with Config.ModelInfo over it (after a model switch too); nil when neither knows it.
func (a *Agent) ModelInfo() (*KnownModel, error) {
	js, err := a.c.jsonOf(func(native *C.PantoAgent, out *C.PantoString) C.int {
		return C.panto_agent_model_info(native, out)
	})
	if err != nil {
		return nil, err
	}
	return knownModel(js), nil
}

func knownModel(js []byte) *KnownModel {
	var m *KnownModel // JSON null: unknown, nil; a null "catalog" leaves ""
	if err := json.Unmarshal(js, &m); err != nil {
		panic(fmt.Sprintf("panto: the library's model JSON does not read: %v", err))
	}
	return m
}
