package panto

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// Tool is a tool the model may call: a name, a description, a JSON Schema of its input (an
// object) and the capabilities it requires; Handler runs it (see docs/tool-use.md).
//
// Build one as a literal, with the schema written by hand:
//
//	weather := panto.Tool{
//		Name:        "get_weather",
//		Description: "Current weather for a city.",
//		InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
//		Handler: func(ctx context.Context, input json.RawMessage) (string, error) { ... },
//	}
//
// or with NewTool, which derives the schema from a struct and decodes the input into it.
//
// A Tool marshals to JSON as its spec, the object panto_agent_add_tool takes.
type Tool struct {
	Name        string          // 1 to 64 letters, digits, '_' or '-'
	Description string          // what the tool does, for the model
	InputSchema json.RawMessage // a JSON Schema of an object; nil: no input ({"type":"object","properties":{}})
	// What the tool requires, e.g. "net"; an agent only offers the tool to the model when it
	// was granted them all (Config.Capabilities).
	Capabilities []string
	// Handler runs the tool on the input (a JSON object) the model gave, which panto has
	// already checked against InputSchema. Its string goes back to the model; an error goes
	// back as a failed result (is_error) whose content is err.Error(), and the turn goes on.
	// ctx is the context of Agent.Run. A panic in Handler is recovered and becomes a failed
	// result too, "panic: " followed by the panic value. The C ABI takes NUL-terminated
	// UTF-8, so NUL bytes and invalid UTF-8 in the result become U+FFFD.
	//
	// Without a Handler, the program gives the result itself: see Stream.SubmitToolResult.
	Handler func(ctx context.Context, input json.RawMessage) (string, error)
}

// emptySchema is the schema of a tool without input, as the library writes it.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// schema is the tool's input schema, the empty one when it has none.
func (t Tool) schema() json.RawMessage {
	if len(bytes.TrimSpace(t.InputSchema)) == 0 {
		return emptySchema
	}
	return t.InputSchema
}

// Validate reports what is wrong with the tool for the library or the providers: its name,
// or a schema that is not a JSON object describing an object.
func (t Tool) Validate() error {
	if !validToolName(t.Name) {
		return fmt.Errorf("panto: tool %q: a tool name must be 1 to 64 letters, digits, '_' or '-'", t.Name)
	}
	var s map[string]json.RawMessage
	if err := json.Unmarshal(t.schema(), &s); err != nil {
		return fmt.Errorf("panto: tool %q: the input schema is not a JSON object: %v", t.Name, err)
	}
	if typ, ok := s["type"]; ok && string(bytes.TrimSpace(typ)) != `"object"` {
		return fmt.Errorf(`panto: tool %q: the input schema must describe an object ("type": "object"), not %s`, t.Name, typ)
	}
	return nil
}

func validToolName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Spec is the tool's spec, the JSON object panto_agent_add_tool takes:
// {"name", "description", "input_schema", "capabilities"}.
func (t Tool) Spec() map[string]any {
	caps := t.Capabilities
	if caps == nil {
		caps = []string{}
	}
	return map[string]any{
		"name":         t.Name,
		"description":  t.Description,
		"input_schema": t.schema(),
		"capabilities": caps,
	}
}

// MarshalJSON writes the tool's Spec.
func (t Tool) MarshalJSON() ([]byte, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(t.Spec())
}

// Anthropic is the tool as the Anthropic Messages API takes it in "tools":
// {"name", "description", "input_schema"}.
func (t Tool) Anthropic() map[string]any {
	return map[string]any{"name": t.Name, "description": t.Description, "input_schema": t.schema()}
}

// OpenAI is the tool as OpenAI Chat Completions takes it in "tools":
// {"type": "function", "function": {"name", "description", "parameters"}}.
func (t Tool) OpenAI() map[string]any {
	return map[string]any{"type": "function", "function": map[string]any{
		"name": t.Name, "description": t.Description, "parameters": t.schema(),
	}}
}

// AllowedWith tells whether an agent granted capabilities may use the tool: whether it
// requires none that capabilities lacks.
func (t Tool) AllowedWith(capabilities []string) bool {
	for _, need := range t.Capabilities {
		if !slices.Contains(capabilities, need) {
			return false
		}
	}
	return true
}

// ToolOption sets an optional part of a tool made by NewTool.
type ToolOption func(*Tool)

// WithCapabilities sets the capabilities the tool requires.
func WithCapabilities(capabilities ...string) ToolOption {
	return func(t *Tool) { t.Capabilities = append([]string(nil), capabilities...) }
}

// NewTool makes a tool whose input is a T: its schema is JSONSchema[T] (field tags
// `json`, `description`, `enum`, `default`), and fn receives the input decoded into a T.
// An empty name is the snake_case form of T's type name (GetWeather → "get_weather").
//
//	type GetWeather struct {
//		City string `json:"city" description:"The city"`
//		Unit string `json:"unit,omitempty" enum:"c,f" default:"c"`
//	}
//	weather, err := panto.NewTool("", "Current weather for a city.",
//		func(ctx context.Context, in GetWeather) (string, error) { ... },
//		panto.WithCapabilities("net"))
func NewTool[T any](name, description string, fn func(ctx context.Context, in T) (string, error), opts ...ToolOption) (Tool, error) {
	typ := reflect.TypeFor[T]()
	if fn == nil {
		return Tool{}, errors.New("panto: NewTool needs a function")
	}
	if name == "" {
		name = snakeCase(base(typ).Name())
		if name == "" {
			return Tool{}, fmt.Errorf("panto: NewTool: %s has no type name to derive the tool's name from; give one", typ)
		}
	}
	schema, err := schemaOfType(typ)
	if err != nil {
		return Tool{}, fmt.Errorf("panto: tool %q: %s", name, strings.TrimPrefix(err.Error(), "panto: "))
	}
	t := Tool{
		Name:        name,
		Description: description,
		InputSchema: schema,
		Handler: func(ctx context.Context, input json.RawMessage) (string, error) {
			var in T
			if err := json.Unmarshal(input, &in); err != nil {
				return "", fmt.Errorf("invalid input for tool %s: %v", name, err)
			}
			return fn(ctx, in)
		},
	}
	for _, o := range opts {
		o(&t)
	}
	if err := t.Validate(); err != nil {
		return Tool{}, err
	}
	return t, nil
}

// MustNewTool is NewTool that panics on an error, for tools declared in package variables.
func MustNewTool[T any](name, description string, fn func(ctx context.Context, in T) (string, error), opts ...ToolOption) Tool {
	t, err := NewTool(name, description, fn, opts...)
	if err != nil {
		panic(err)
	}
	return t
}

// snakeCase turns a Go name into snake_case: "GetWeather" → "get_weather",
// "HTTPRequest" → "http_request", "ReadFileV2" → "read_file_v2".
func snakeCase(s string) string {
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		if unicode.IsUpper(r) {
			prevLower := i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]))
			endOfAcronym := i > 0 && unicode.IsUpper(rs[i-1]) && i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if prevLower || endOfAcronym {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// ExportTools writes tools as a JSON array in a provider's format: "anthropic"
// ({name, description, input_schema}), "openai" ({type: "function", function: {name,
// description, parameters}}) or "panto" (their specs, with "native": false). It is what
// the library sends the provider for an agent with these tools (Agent.Tools).
func ExportTools(format string, tools []Tool) (json.RawMessage, error) {
	out := make([]any, 0, len(tools))
	for _, t := range tools {
		if err := t.Validate(); err != nil {
			return nil, err
		}
		switch format {
		case "anthropic":
			out = append(out, t.Anthropic())
		case "openai":
			out = append(out, t.OpenAI())
		case "panto":
			spec := t.Spec()
			spec["native"] = false
			out = append(out, spec)
		default:
			return nil, fmt.Errorf(`panto: unknown tool format %q: "anthropic", "openai" or "panto"`, format)
		}
	}
	return json.Marshal(out)
}

// Registry is a set of tools by name, in the order they were registered. The zero Registry
// is empty and ready; a Registry is safe for concurrent use.
//
//	var tools panto.Registry
//	tools.Register(weather, search)
//	agent, err := panto.NewAgent(panto.Config{..., Tools: tools.All()})
type Registry struct {
	mu    sync.RWMutex
	tools []Tool
}

// NewRegistry is a registry holding tools.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{}
	if err := r.Register(tools...); err != nil {
		return nil, err
	}
	return r, nil
}

// Register adds tools. A tool that is not valid, or whose name is taken, is refused with an
// error and none of tools is added.
func (r *Registry) Register(tools ...Tool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := map[string]bool{}
	for _, t := range r.tools {
		names[t.Name] = true
	}
	for _, t := range tools {
		if err := t.Validate(); err != nil {
			return err
		}
		if names[t.Name] {
			return fmt.Errorf("panto: a tool named %q is already registered", t.Name)
		}
		names[t.Name] = true
	}
	r.tools = append(r.tools, tools...)
	return nil
}

// Get is the tool named name.
func (r *Registry) Get(name string) (Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, t := range r.tools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// All is every tool, in the order of registration.
func (r *Registry) All() []Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.tools)
}

// Filter is the tools an agent granted capabilities may use (see Tool.AllowedWith), in the
// order of registration. Nil grants nothing: the tools that require no capability.
func (r *Registry) Filter(capabilities []string) []Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []Tool
	for _, t := range r.tools {
		if t.AllowedWith(capabilities) {
			out = append(out, t)
		}
	}
	return out
}

// Export is ExportTools(format, r.Filter(capabilities)): the "tools" an agent granted
// capabilities sends to the provider. Export every tool with ExportTools(format, r.All()).
func (r *Registry) Export(format string, capabilities []string) (json.RawMessage, error) {
	return ExportTools(format, r.Filter(capabilities))
}
