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
	Name        string          // 1 to 64 letters, digits, '_' or '-' (the library checks it)
	Description string          // what the tool does, for the model
	InputSchema json.RawMessage // a JSON Schema of an object; nil: no input ({"type":"object","properties":{}})
	// What the tool requires, e.g. "net"; an agent only offers the tool to the model when it
	// was granted them all (Config.Capabilities).
	Capabilities []string
	// Sequential makes the tool's calls run alone: after the calls of the message before
	// them finished, before those after them start (for a tool that must not overlap
	// another). Otherwise the stream runs the calls of a message at once.
	Sequential bool
	// NeedsApproval makes its calls wait for a person's answer (the spec's "approval":
	// "always"): an EventApprovalRequest lists them, and Stream.Approve or Stream.Deny
	// answers each (Config's approval_rules decide first).
	NeedsApproval bool
	// Handler runs the tool on the input (a JSON object) the model gave, which panto has
	// already checked against InputSchema. Its string goes back to the model; an error goes
	// back as a failed result (is_error) whose content is err.Error(), and the turn goes on.
	// ctx is the context of Agent.Run, canceled too when the turn ends before the handler
	// returns; ReportProgress(ctx, ...) reports the tool's progress. Handlers run on
	// goroutines of their own (see Sequential). A panic in Handler is recovered and becomes a failed
	// result too, "panic: " followed by the panic value. The result goes to the library as
	// it is, NUL bytes included; the library replaces invalid UTF-8 with U+FFFD.
	//
	// Without a Handler (or a PartsHandler), the program gives the result itself: see
	// Stream.SubmitToolResult.
	Handler func(ctx context.Context, input json.RawMessage) (string, error)
	// PartsHandler is a Handler whose result is parts: text, images and PDFs (see Part),
	// such as the screenshot a tool took; the rest is as for Handler. A tool has a Handler or
	// a PartsHandler, not both (Validate refuses that).
	PartsHandler func(ctx context.Context, input json.RawMessage) ([]Part, error)
}

// hasHandler says whether the stream runs the tool itself.
func (t Tool) hasHandler() bool { return t.Handler != nil || t.PartsHandler != nil }

// checkHandlers refuses a tool with two handlers: which one runs would be a guess.
func (t Tool) checkHandlers() error {
	if t.Handler != nil && t.PartsHandler != nil {
		return &Error{Code: ErrConfig, Message: fmt.Sprintf(
			"tool %q has both a Handler and a PartsHandler: give one", t.Name)}
	}
	return nil
}

// Validate asks the library whether it takes the tool: an *Error matching ErrConfig says
// which rule the tool breaks (its name, its schema, or both handlers set).
func (t Tool) Validate() error {
	ts, err := newToolSet(t)
	if err != nil {
		return err
	}
	ts.free()
	return nil
}

// Spec is the tool's spec, the JSON object panto_agent_add_tool takes:
// {"name", "description", "input_schema", "capabilities", "sequential"}, without the schema,
// the capabilities and "sequential" when the tool has none (the library's defaults: no
// input, none required, not sequential).
func (t Tool) Spec() map[string]any {
	spec := map[string]any{"name": t.Name, "description": t.Description}
	if len(bytes.TrimSpace(t.InputSchema)) > 0 {
		spec["input_schema"] = t.InputSchema
	}
	if t.Capabilities != nil {
		spec["capabilities"] = t.Capabilities
	}
	if t.Sequential {
		spec["sequential"] = true
	}
	if t.NeedsApproval {
		spec["approval"] = "always"
	}
	return spec
}

// MarshalJSON writes the tool's Spec, once the library has checked it.
func (t Tool) MarshalJSON() ([]byte, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(t.Spec())
}

// ToolOption sets an optional part of a tool made by NewTool.
type ToolOption func(*Tool)

// WithCapabilities sets the capabilities the tool requires.
func WithCapabilities(capabilities ...string) ToolOption {
	return func(t *Tool) { t.Capabilities = append([]string(nil), capabilities...) }
}

// WithSequential makes the tool's calls run alone (see Tool.Sequential).
func WithSequential() ToolOption { return func(t *Tool) { t.Sequential = true } }

// ToolOutput is what the function of NewTool returns: a string, or parts (text, images,
// PDFs; see Part).
type ToolOutput interface{ string | []Part }

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
//
// fn returns a string (the tool's Handler), or parts (its PartsHandler):
//
//	type Screenshot struct {
//		URL string `json:"url"`
//	}
//	shot, err := panto.NewTool("", "A screenshot of a web page.",
//		func(ctx context.Context, in Screenshot) ([]panto.Part, error) {
//			png, err := capture(ctx, in.URL)
//			return []panto.Part{panto.Text("The page " + in.URL), panto.Media(png, "image/png")}, err
//		})
func NewTool[T any, R ToolOutput](name, description string, fn func(ctx context.Context, in T) (R, error), opts ...ToolOption) (Tool, error) {
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
	t := Tool{Name: name, Description: description, InputSchema: schema}
	run := func(ctx context.Context, input json.RawMessage) (R, error) {
		var in T
		if err := json.Unmarshal(input, &in); err != nil {
			var zero R
			return zero, fmt.Errorf("invalid input for tool %s: %v", name, err)
		}
		return fn(ctx, in)
	}
	switch run := any(run).(type) {
	case func(context.Context, json.RawMessage) (string, error):
		t.Handler = run
	case func(context.Context, json.RawMessage) ([]Part, error):
		t.PartsHandler = run
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
func MustNewTool[T any, R ToolOutput](name, description string, fn func(ctx context.Context, in T) (R, error), opts ...ToolOption) Tool {
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

// ExportTools writes tools as a JSON array in a provider's format (see ToolFormat), as the
// library sends them for an agent with these tools (Agent.Tools); FormatPanto marks each
// "native": false. The library checks each tool first (Tool.Validate) and refuses two of
// the same name.
func ExportTools(format ToolFormat, tools []Tool) (json.RawMessage, error) {
	return exportTools(format, nil, tools)
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

// Register adds tools. When the library refuses one (Tool.Validate) or its name is taken
// (an *Error matching ErrConfig), none of tools is added.
func (r *Registry) Register(tools ...Tool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	all := append(slices.Clip(r.tools), tools...)
	ts, err := newToolSet(all...)
	if err != nil {
		return err
	}
	ts.free()
	r.tools = all
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

// Filter is the tools an agent granted capabilities may use, in the order of registration:
// those that require no capability beyond them. Nil grants nothing: the tools that require
// no capability.
func (r *Registry) Filter(capabilities []string) ([]Tool, error) {
	js, err := r.Export(FormatPanto, capabilities)
	if err != nil {
		return nil, err
	}
	var allowed []struct{ Name string }
	if err := json.Unmarshal(js, &allowed); err != nil {
		return nil, err
	}
	out := make([]Tool, 0, len(allowed))
	for _, a := range allowed {
		t, _ := r.Get(a.Name)
		out = append(out, t)
	}
	return out, nil
}

// Export is the "tools" an agent granted capabilities sends to the provider: the tools of
// Filter(capabilities) in format. Export every tool with ExportTools(format, r.All()).
func (r *Registry) Export(format ToolFormat, capabilities []string) (json.RawMessage, error) {
	if capabilities == nil {
		capabilities = []string{}
	}
	return exportTools(format, capabilities, r.All())
}
