package panto

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
)

// Parse runs a turn whose answer must be a T, as JSON, and returns it: structured output.
// The response format is a json_schema one whose schema is derived from T as NewTool derives
// a tool's (JSONSchema: a struct or a map; the `json`, `description`, `enum` and `default`
// tags), named after T's type (snake_case), unless opts set a response format of their own.
// Host tools run as with Run.
//
//	type Capital struct {
//		City    string `json:"city"`
//		Country string `json:"country"`
//	}
//	c, err := panto.Parse[Capital](ctx, agent, "The capital of Peru?")
//
// An answer that is not JSON of the schema (the library checks it, see Stream.FinalJSON),
// or that does not decode into a T, gives an *Error matching ErrOutput whose Output is the
// model's text.
//
// Every object of the schema gets "additionalProperties": false, which both providers'
// structured outputs ask for. The library makes the format "strict" (OpenAI) when every
// property is required, which a struct without omitempty or pointer fields gives.
func Parse[T any](ctx context.Context, agent *Agent, input string, opts ...RunOption) (T, error) {
	var zero T
	typ := reflect.TypeFor[T]()
	format, err := responseFormatOf(typ)
	if err != nil {
		return zero, err
	}
	withFormat, err := withResponseFormat(opts, format)
	if err != nil {
		return zero, err
	}
	stream, err := agent.Run(ctx, input, append(opts, withFormat)...)
	if err != nil {
		return zero, err
	}
	defer stream.Close()
	text, err := stream.FinalJSON()
	if err != nil {
		return zero, err
	}
	var v T
	if err := json.Unmarshal(text, &v); err != nil {
		return zero, &Error{Code: ErrOutput, Type: "output_error", Output: string(text),
			Message: fmt.Sprintf("the answer does not decode into %s: %v", typ, err)}
	}
	return v, nil
}

// responseFormatOf is the json_schema response format of a T.
func responseFormatOf(t reflect.Type) (ResponseFormat, error) {
	s, err := rootSchema(t, "a structured answer")
	if err != nil {
		return ResponseFormat{}, err
	}
	schema, err := marshalSchema(t, closeObjects(s))
	if err != nil {
		return ResponseFormat{}, err
	}
	name := snakeCase(base(t).Name())
	if name == "" {
		name = "response"
	}
	if len(name) > 64 {
		name = name[:64]
	}
	return ResponseFormat{Type: "json_schema", Schema: schema, Name: name}, nil
}

// closeObjects adds "additionalProperties": false to every object schema with properties in
// s.
func closeObjects(s object) object {
	if _, ok := lookup(s, "properties").(object); ok && lookup(s, "additionalProperties") == nil {
		s.set("additionalProperties", false)
	}
	for i, m := range s {
		if o, ok := m.value.(object); ok {
			s[i].value = closeObjects(o)
		}
	}
	return s
}

// withResponseFormat is the RunOption that adds format to the turn options opts set, unless
// they set a response format already.
func withResponseFormat(opts []RunOption, format ResponseFormat) (RunOption, error) {
	o, err := collectRunOptions(opts)
	if err != nil {
		return nil, err
	}
	options := map[string]any{}
	if o.options != nil {
		if err := json.Unmarshal(o.options, &options); err != nil {
			return nil, fmt.Errorf("panto: the turn options are not a JSON object: %w", err)
		}
	}
	if _, set := options["response_format"]; !set {
		options["response_format"] = format
	}
	js, err := json.Marshal(options)
	if err != nil {
		return nil, err
	}
	return WithOptionsJSON(js), nil
}
