package panto

/*
#include "panto.h"
*/
import "C"

import (
	"encoding/json"
	"fmt"
)

// ToolFormat is a format tools are exported in (Agent.Tools, ExportTools, Registry.Export).
type ToolFormat int32

const (
	// FormatPanto: the specs, with "native": true for the library's own tools such as `read`.
	FormatPanto ToolFormat = C.PANTO_TOOL_FORMAT_PANTO
	// FormatAnthropic: as the Anthropic Messages API takes them, {name, description, input_schema}.
	FormatAnthropic ToolFormat = C.PANTO_TOOL_FORMAT_ANTHROPIC
	// FormatOpenAI: as OpenAI Chat Completions takes them, {type: "function", function:
	// {name, description, parameters}}.
	FormatOpenAI ToolFormat = C.PANTO_TOOL_FORMAT_OPENAI
)

// toolSet is a native tool set (PantoTools): the library's check of tool specs (the name
// rule, the schema's shape, unique names) and its export with the capability filter. The
// binding writes none of those rules itself.
type toolSet struct{ native *C.PantoTools }

// newToolSet is a set holding tools; the first one the library refuses gives its error.
func newToolSet(tools ...Tool) (*toolSet, error) {
	ts := &toolSet{}
	if rc := C.panto_tools_new(&ts.native); rc < 0 {
		return nil, &Error{Code: Code(rc), Message: "panto_tools_new failed"}
	}
	for _, t := range tools {
		if err := ts.add(t); err != nil {
			ts.free()
			return nil, err
		}
	}
	return ts, nil
}

func (ts *toolSet) free() { C.panto_tools_free(ts.native) }

// add checks the tool's spec and adds it; an *Error matching ErrConfig says which rule it
// breaks.
func (ts *toolSet) add(t Tool) error {
	if err := t.checkHandlers(); err != nil {
		return err
	}
	spec, err := json.Marshal(t.Spec())
	if err != nil {
		return fmt.Errorf("panto: tool %q: %w", t.Name, err)
	}
	if rc := C.panto_tools_add(ts.native, pantoBytes(spec)); rc < 0 {
		return toolsError(ts.native, rc)
	}
	return nil
}

// export is the set as a JSON array in format; with capabilities not nil, only the tools
// an agent granted them may use.
func (ts *toolSet) export(format ToolFormat, capabilities []string) (json.RawMessage, error) {
	var granted []byte // nil: no filter
	if capabilities != nil {
		granted, _ = json.Marshal(capabilities) // strings cannot fail
	}
	var out C.PantoString
	if rc := C.panto_tools_export(ts.native, C.int(format), pantoBytes(granted), &out); rc < 0 {
		return nil, toolsError(ts.native, rc)
	}
	return json.RawMessage(goString(out)), nil
}

// exportTools is tools as the library exports them, see toolSet.export.
func exportTools(format ToolFormat, capabilities []string, tools []Tool) (json.RawMessage, error) {
	ts, err := newToolSet(tools...)
	if err != nil {
		return nil, err
	}
	defer ts.free()
	return ts.export(format, capabilities)
}
