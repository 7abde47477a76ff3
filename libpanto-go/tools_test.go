package panto_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"panto.dev/panto"
)

// ---- Schemas ---------------------------------------------------------------------------

// jsonEqual compares two JSON texts as values.
func jsonEqual(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got invalid JSON %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want is invalid JSON %s: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("got  %s\nwant %s", got, compact(t, want))
	}
}

func compact(t *testing.T, s string) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

type Unit string

type Location struct {
	Lat float64 `json:"lat"`
	Lon float64 `json:"lon"`
}

type AllTypes struct {
	S      string                `json:"s"`
	I      int                   `json:"i"`
	I8     int8                  `json:"i8"`
	I64    int64                 `json:"i64"`
	U      uint                  `json:"u"`
	U16    uint16                `json:"u16"`
	F32    float32               `json:"f32"`
	F64    float64               `json:"f64"`
	B      bool                  `json:"b"`
	Strs   []string              `json:"strs"`
	Grid   [][]int               `json:"grid"`
	Pair   [2]float64            `json:"pair"`
	Bytes  []byte                `json:"bytes"`
	Map    map[string]int        `json:"map"`
	ByID   map[int]Location      `json:"by_id"`
	Loc    Location              `json:"loc"`
	Locs   []Location            `json:"locs"`
	Any    any                   `json:"any"`
	Raw    json.RawMessage       `json:"raw"`
	When   time.Time             `json:"when"`
	Named  Unit                  `json:"named"`
	PtrPtr **int                 `json:"ptr_ptr"`
	Nested struct{ Deep []bool } `json:"nested"`
	NoTag  string
}

func TestJSONSchemaTypes(t *testing.T) {
	got, err := panto.JSONSchema[AllTypes]()
	if err != nil {
		t.Fatal(err)
	}
	loc := `{"type":"object","properties":{"lat":{"type":"number"},"lon":{"type":"number"}},"required":["lat","lon"]}`
	jsonEqual(t, got, `{"type":"object","properties":{
		"s":{"type":"string"},
		"i":{"type":"integer"},
		"i8":{"type":"integer"},
		"i64":{"type":"integer"},
		"u":{"type":"integer","minimum":0},
		"u16":{"type":"integer","minimum":0},
		"f32":{"type":"number"},
		"f64":{"type":"number"},
		"b":{"type":"boolean"},
		"strs":{"type":"array","items":{"type":"string"}},
		"grid":{"type":"array","items":{"type":"array","items":{"type":"integer"}}},
		"pair":{"type":"array","items":{"type":"number"},"minItems":2,"maxItems":2},
		"bytes":{"type":"string","contentEncoding":"base64"},
		"map":{"type":"object","additionalProperties":{"type":"integer"}},
		"by_id":{"type":"object","additionalProperties":`+loc+`},
		"loc":`+loc+`,
		"locs":{"type":"array","items":`+loc+`},
		"any":{},
		"raw":{},
		"when":{"type":"string","format":"date-time"},
		"named":{"type":"string"},
		"ptr_ptr":{"type":"integer"},
		"nested":{"type":"object","properties":{"Deep":{"type":"array","items":{"type":"boolean"}}},"required":["Deep"]},
		"NoTag":{"type":"string"}},
	  "required":["s","i","i8","i64","u","u16","f32","f64","b","strs","grid","pair","bytes","map","by_id",
	              "loc","locs","any","raw","when","named","nested","NoTag"]}`)

	// The properties keep the order of the fields.
	var s struct {
		Properties json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(got, &s); err != nil {
		t.Fatal(err)
	}
	if i, j := strings.Index(string(s.Properties), `"s"`), strings.Index(string(s.Properties), `"NoTag"`); i < 0 || j < i {
		t.Errorf("properties out of the fields' order: %s", s.Properties)
	}
	// A pointer to the struct gives the same schema.
	ptr, err := panto.JSONSchema[*AllTypes]()
	if err != nil || string(ptr) != string(got) {
		t.Errorf("JSONSchema[*AllTypes] = %s, %v", ptr, err)
	}
}

type Base struct {
	ID      string `json:"id" description:"Shadowed by the outer id"`
	Created string `json:"created"`
}

type Tagged struct {
	Base
	ID       int      `json:"id" description:"The record"`
	City     string   `json:"city" description:"The city, e.g. \"Paris\""`
	Unit     string   `json:"unit,omitempty" enum:"c,f" default:"c"`
	Level    int      `json:"level" enum:"1, 2, 3" default:"2"`
	Ratio    float64  `json:"ratio,omitzero" default:"0.5"`
	Tags     []string `json:"tags,omitempty" enum:"red,green" description:"Colours"`
	Verbose  *bool    `json:"verbose" default:"true"`
	Quoted   int      `json:"quoted,string"`
	Skipped  string   `json:"-"`
	Dash     string   `json:"-,"`
	internal string
	*Extra
}

type Extra struct {
	Note string `json:"note,omitempty"`
}

func TestJSONSchemaTags(t *testing.T) {
	got, err := panto.JSONSchema[Tagged]()
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, got, `{"type":"object","properties":{
		"created":{"type":"string"},
		"id":{"type":"integer","description":"The record"},
		"city":{"type":"string","description":"The city, e.g. \"Paris\""},
		"unit":{"type":"string","enum":["c","f"],"default":"c"},
		"level":{"type":"integer","enum":[1,2,3],"default":2},
		"ratio":{"type":"number","default":0.5},
		"tags":{"type":"array","items":{"type":"string","enum":["red","green"]},"description":"Colours"},
		"verbose":{"type":"boolean","default":true},
		"quoted":{"type":"string"},
		"-":{"type":"string"},
		"note":{"type":"string"}},
	  "required":["created","id","city","level","quoted","-"]}`)
}

func TestJSONSchemaErrors(t *testing.T) {
	type Node struct {
		Children []Node `json:"children"`
	}
	type WithChan struct {
		C chan int `json:"c"`
	}
	type WithFunc struct {
		F func() `json:"f"`
	}
	type WithComplex struct {
		Z complex128 `json:"z"`
	}
	type BadEnum struct {
		N int `json:"n" enum:"1,two"`
	}
	type BadDefault struct {
		B bool `json:"b" default:"maybe"`
	}
	type BadKey struct {
		M map[Location]int `json:"m"`
	}
	for _, c := range []struct {
		name string
		f    func() (json.RawMessage, error)
		want string
	}{
		{"recursive", panto.JSONSchema[Node], "recursive type"},
		{"chan", panto.JSONSchema[WithChan], "field c: a value of type chan int has no JSON form"},
		{"func", panto.JSONSchema[WithFunc], "field f"},
		{"complex", panto.JSONSchema[WithComplex], "complex128"},
		{"enum", panto.JSONSchema[BadEnum], `enum value "two"`},
		{"default", panto.JSONSchema[BadDefault], `default "maybe"`},
		{"map key", panto.JSONSchema[BadKey], "map key"},
		{"not an object", panto.JSONSchema[int], "is not a struct or a map"},
		{"slice", panto.JSONSchema[[]Location], "is not a struct or a map"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := c.f()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("schema %s, err %v; want an error containing %q", s, err, c.want)
			}
		})
	}
	// A map at the root is an object.
	s, err := panto.JSONSchema[map[string]string]()
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, s, `{"type":"object","additionalProperties":{"type":"string"}}`)
}

// Celsius describes its own JSON form.
type Celsius struct{ v float64 }

func (c *Celsius) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, &c.v) }

func (Celsius) JSONSchema() json.RawMessage {
	return json.RawMessage(`{"type":"number","minimum":-273.15}`)
}

func TestJSONSchemaProvider(t *testing.T) {
	type In struct {
		T Celsius `json:"t" description:"Temperature"`
	}
	s, err := panto.JSONSchema[In]()
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, s, `{"type":"object","properties":{"t":{"type":"number","minimum":-273.15,"description":"Temperature"}},"required":["t"]}`)
}

// ---- NewTool -----------------------------------------------------------------------------

type GetWeather struct {
	City string `json:"city" description:"The city"`
	Unit string `json:"unit,omitempty" enum:"c,f" default:"c"`
}

type HTTPRequestV2 struct {
	URL string `json:"url"`
}

func TestNewTool(t *testing.T) {
	var got GetWeather
	tool, err := panto.NewTool("", "Current weather for a city.",
		func(ctx context.Context, in GetWeather) (string, error) {
			got = in
			return "Sunny in " + in.City, nil
		}, panto.WithCapabilities("net"))
	if err != nil {
		t.Fatal(err)
	}
	if tool.Name != "get_weather" || tool.Description != "Current weather for a city." ||
		!reflect.DeepEqual(tool.Capabilities, []string{"net"}) {
		t.Fatalf("tool = %+v", tool)
	}
	jsonEqual(t, tool.InputSchema, `{"type":"object","properties":{"city":{"type":"string","description":"The city"},
		"unit":{"type":"string","enum":["c","f"],"default":"c"}},"required":["city"]}`)

	out, err := tool.Handler(context.Background(), json.RawMessage(`{"city":"Paris","unit":"f"}`))
	if err != nil || out != "Sunny in Paris" || got != (GetWeather{City: "Paris", Unit: "f"}) {
		t.Fatalf("handler: %q, %v, decoded %+v", out, err, got)
	}
	if _, err := tool.Handler(context.Background(), json.RawMessage(`{"city": 3}`)); err == nil ||
		!strings.Contains(err.Error(), "invalid input for tool get_weather") {
		t.Fatalf("handler on a bad input: %v", err)
	}

	// The name derives from the type name; a pointer type works too.
	for _, c := range []struct {
		name string
		f    func() (panto.Tool, error)
	}{
		{"http_request_v2", func() (panto.Tool, error) {
			return panto.NewTool("", "", func(context.Context, HTTPRequestV2) (string, error) { return "", nil })
		}},
		{"get_weather", func() (panto.Tool, error) {
			return panto.NewTool("", "", func(context.Context, *GetWeather) (string, error) { return "", nil })
		}},
		{"explicit-name", func() (panto.Tool, error) {
			return panto.NewTool("explicit-name", "", func(context.Context, GetWeather) (string, error) { return "", nil })
		}},
	} {
		tool, err := c.f()
		if err != nil || tool.Name != c.name {
			t.Errorf("name %q, err %v; want %q", tool.Name, err, c.name)
		}
	}

	// Refused: an anonymous type without a name, a bad name, a type with no schema.
	if _, err := panto.NewTool("", "", func(context.Context, struct{ A int }) (string, error) { return "", nil }); err == nil ||
		!strings.Contains(err.Error(), "no type name") {
		t.Errorf("anonymous type: %v", err)
	}
	if _, err := panto.NewTool("has space", "", func(context.Context, GetWeather) (string, error) { return "", nil }); err == nil ||
		!strings.Contains(err.Error(), "letters, digits") {
		t.Errorf("bad name: %v", err)
	}
	if _, err := panto.NewTool("n", "", func(context.Context, string) (string, error) { return "", nil }); err == nil ||
		!strings.Contains(err.Error(), `tool "n"`) {
		t.Errorf("string input: %v", err)
	}
}

// ---- Export and registry --------------------------------------------------------------------

func testTools(t *testing.T) (weather, search, local panto.Tool) {
	t.Helper()
	weather = panto.MustNewTool("", "Current weather for a city.",
		func(ctx context.Context, in GetWeather) (string, error) { return "Sunny", nil },
		panto.WithCapabilities("net"))
	type Search struct {
		Query string `json:"query"`
		Limit int    `json:"limit,omitempty"`
	}
	search = panto.MustNewTool("search", "Search the web & files.",
		func(ctx context.Context, in Search) (string, error) { return "", nil },
		panto.WithCapabilities("net", "fs.read"))
	local = panto.Tool{Name: "clock", Description: "", Handler: func(context.Context, json.RawMessage) (string, error) {
		return "noon", nil
	}}
	return
}

// The binding's export is the library's: each format's shape, the library's default schema
// for a tool without one, and its refusals.
func TestExportFormats(t *testing.T) {
	weather, _, clock := testTools(t)
	schema := string(weather.InputSchema)
	a, err := panto.ExportTools(panto.FormatAnthropic, []panto.Tool{weather})
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, a, `[{"name":"get_weather","description":"Current weather for a city.","input_schema":`+schema+`}]`)
	o, err := panto.ExportTools(panto.FormatOpenAI, []panto.Tool{weather})
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, o, `[{"type":"function","function":{"name":"get_weather","description":"Current weather for a city.","parameters":`+schema+`}}]`)
	spec, err := json.Marshal(weather)
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, spec, `{"name":"get_weather","description":"Current weather for a city.","input_schema":`+schema+`,"capabilities":["net"]}`)
	// A tool without a schema takes no input.
	c, err := panto.ExportTools(panto.FormatAnthropic, []panto.Tool{clock})
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, c, `[{"name":"clock","description":"","input_schema":{"type":"object","properties":{}}}]`)

	if _, err := panto.ExportTools(panto.ToolFormat(99), []panto.Tool{weather}); !errors.Is(err, panto.ErrInvalidArgument) {
		t.Errorf("ExportTools in an unknown format: %v", err)
	}
	if _, err := panto.ExportTools(panto.FormatPanto, []panto.Tool{weather, weather}); !errors.Is(err, panto.ErrConfig) {
		t.Errorf("ExportTools of two tools of one name: %v", err)
	}
	var perr *panto.Error
	bad := panto.Tool{Name: "bad", InputSchema: json.RawMessage(`{"type":"string"}`)}
	if _, err := json.Marshal(bad); !errors.As(err, &perr) || perr.Code != panto.ErrConfig || !strings.Contains(perr.Message, "describe an object") {
		t.Errorf("a schema of a string: %v", err)
	}
	bad.InputSchema = json.RawMessage(`[1]`)
	if err := bad.Validate(); !errors.Is(err, panto.ErrConfig) {
		t.Errorf("a schema that is an array: Validate = %v", err)
	}
	for _, name := range []string{"", "no good", strings.Repeat("x", 65), "été"} {
		if err := (panto.Tool{Name: name}).Validate(); !errors.Is(err, panto.ErrConfig) {
			t.Errorf("the name %q: Validate = %v", name, err)
		}
	}
	if err := (panto.Tool{Name: strings.Repeat("x", 64)}).Validate(); err != nil {
		t.Errorf("a name of 64 characters: %v", err)
	}
}

func TestRegistry(t *testing.T) {
	weather, search, clock := testTools(t)
	var reg panto.Registry
	if err := reg.Register(weather, search); err != nil {
		t.Fatal(err)
	}
	var perr *panto.Error
	if err := reg.Register(clock, weather); !errors.As(err, &perr) || perr.Code != panto.ErrConfig || !strings.Contains(perr.Message, "get_weather") {
		t.Fatalf("duplicate: %v", err)
	}
	if len(reg.All()) != 2 {
		t.Fatalf("a refused Register added tools: %d", len(reg.All()))
	}
	if err := reg.Register(panto.Tool{Name: "no good"}); err == nil {
		t.Fatal("an invalid tool was registered")
	}
	if err := reg.Register(clock); err != nil {
		t.Fatal(err)
	}
	if got, ok := reg.Get("search"); !ok || got.Name != "search" || got.Description != search.Description {
		t.Fatalf("Get(search) = %+v, %v", got, ok)
	}
	if _, ok := reg.Get("nothing"); ok {
		t.Fatal("Get found a tool never registered")
	}
	names := func(tools []panto.Tool) string {
		var n []string
		for _, t := range tools {
			n = append(n, t.Name)
		}
		return strings.Join(n, ",")
	}
	for _, c := range []struct {
		caps []string
		want string
	}{
		{nil, "clock"},
		{[]string{"net"}, "get_weather,clock"},
		{[]string{"fs.read"}, "clock"},
		{[]string{"fs.read", "net", "other"}, "get_weather,search,clock"},
	} {
		allowed, err := reg.Filter(c.caps)
		if err != nil {
			t.Fatal(err)
		}
		if got := names(allowed); got != c.want {
			t.Errorf("Filter(%v) = %s, want %s", c.caps, got, c.want)
		}
	}
	if got := names(reg.All()); got != "get_weather,search,clock" {
		t.Errorf("All = %s", got)
	}

	// The export equals what the library sends for an agent with the same tools and
	// capabilities.
	for _, caps := range [][]string{nil, {"net"}, {"net", "fs.read"}} {
		cfg := testConfig("anthropic")
		cfg.Tools = reg.All()
		cfg.Capabilities = caps
		agent := newAgent(t, cfg)
		for _, format := range []panto.ToolFormat{panto.FormatAnthropic, panto.FormatOpenAI, panto.FormatPanto} {
			mine, err := reg.Export(format, caps)
			if err != nil {
				t.Fatal(err)
			}
			lib, err := agent.Tools(format, true)
			if err != nil {
				t.Fatal(err)
			}
			jsonEqual(t, mine, string(lib))
			all, err := panto.ExportTools(format, reg.All())
			if err != nil {
				t.Fatal(err)
			}
			libAll, err := agent.Tools(format, false)
			if err != nil {
				t.Fatal(err)
			}
			jsonEqual(t, all, string(libAll))
		}
	}
	agent := newAgent(t, testConfig("anthropic"))
	if _, err := agent.Tools(panto.ToolFormat(99), false); !errors.Is(err, panto.ErrInvalidArgument) {
		t.Errorf("Tools in an unknown format: %v", err)
	}
}

func TestAddTool(t *testing.T) {
	weather, _, clock := testTools(t)
	agent := newAgent(t, testConfig("anthropic"))
	if err := agent.AddTool(weather); err != nil {
		t.Fatal(err)
	}
	err := agent.AddTool(weather)
	var perr *panto.Error
	if !errors.Is(err, panto.ErrConfig) || !errors.As(err, &perr) || !strings.Contains(perr.Message, "get_weather") {
		t.Fatalf("a second get_weather: %v", err)
	}
	if err := agent.AddTool(panto.Tool{Name: ""}); !errors.Is(err, panto.ErrConfig) {
		t.Fatalf("a tool without a name: %v", err)
	}

	// Not while a stream is unfinished.
	loadScenario(t, scenario(textAnswer("Hello world")))
	stream := run(t, agent, "Hi")
	if !stream.Next() {
		t.Fatal(stream.Err())
	}
	if err := agent.AddTool(clock); !errors.Is(err, panto.ErrBusy) {
		t.Fatalf("AddTool during a turn: %v", err)
	}
	stream.Close()
	if err := agent.AddTool(clock); err != nil {
		t.Fatal(err)
	}
	lib, err := agent.Tools(panto.FormatPanto, false)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := panto.ExportTools(panto.FormatPanto, []panto.Tool{weather, clock})
	jsonEqual(t, lib, string(want))

	// NewAgent refuses a config whose tools the library refuses, and frees the agent.
	cfg := testConfig("anthropic")
	cfg.Tools = []panto.Tool{weather, weather}
	if a, err := panto.NewAgent(cfg); !errors.Is(err, panto.ErrConfig) || a != nil {
		t.Fatalf("NewAgent with a duplicate tool: %v", err)
	}
	agent.Close()
	if err := agent.AddTool(clock); !errors.Is(err, panto.ErrClosed) {
		t.Fatalf("AddTool on a closed agent: %v", err)
	}
}

// nestedSchema is an object schema nested depth deep: {"type":"object","properties":{"x":[[...]]}}.
func nestedSchema(depth int) json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"x":` + strings.Repeat("[", depth-2) + strings.Repeat("]", depth-2) + `}}`)
}

func TestASchemaNestedTooDeeplyIsAConfigError(t *testing.T) {
	agent := newAgent(t, testConfig("anthropic"))
	err := agent.AddTool(panto.Tool{Name: "deep", InputSchema: nestedSchema(300)})
	var perr *panto.Error
	if !errors.Is(err, panto.ErrConfig) || !errors.As(err, &perr) || !strings.Contains(perr.Message, "nested more than 128 levels deep") {
		t.Fatalf("a schema 300 deep: %v", err)
	}
	if err := agent.AddTool(panto.Tool{Name: "at_limit", InputSchema: nestedSchema(128)}); err != nil {
		t.Fatalf("a schema 128 deep, after one refused: %v", err)
	}
	cfg := testConfig("anthropic")
	cfg.Tools = []panto.Tool{{Name: "deep", InputSchema: nestedSchema(300)}}
	if a, err := panto.NewAgent(cfg); !errors.Is(err, panto.ErrConfig) || a != nil {
		t.Fatalf("NewAgent with a schema 300 deep: %v", err)
	}
	// Deeper than encoding/json reads (10000): the binding's own error, before the library.
	if err := agent.AddTool(panto.Tool{Name: "deeper", InputSchema: nestedSchema(20000)}); err == nil || errors.As(err, &perr) {
		t.Fatalf("a schema 20000 deep: %v", err)
	}
}

// ---- Turns with tools --------------------------------------------------------------------

// toolUse is a scripted answer calling tools, given as (id, name, input) triples, after
// an optional text.
func toolUse(text string, calls ...any) map[string]any {
	var content []any
	if text != "" {
		content = append(content, map[string]any{"type": "text", "text": text})
	}
	for i := 0; i < len(calls); i += 3 {
		content = append(content, map[string]any{"type": "tool_use", "id": calls[i], "name": calls[i+1], "input": calls[i+2]})
	}
	return map[string]any{"message": map[string]any{
		"content": content, "stop_reason": "tool_use",
		"usage": map[string]any{"input_tokens": 20, "output_tokens": 7},
	}}
}

func collect(t *testing.T, stream *panto.Stream) []panto.Event {
	t.Helper()
	var events []panto.Event
	for ev := range stream.Iter {
		events = append(events, ev)
	}
	return events
}

func ofKind(events []panto.Event, kinds ...panto.EventKind) []panto.Event {
	var out []panto.Event
	for _, ev := range events {
		for _, k := range kinds {
			if ev.Kind == k {
				out = append(out, ev)
			}
		}
	}
	return out
}

func kinds(events []panto.Event) string {
	var s []string
	for _, ev := range events {
		s = append(s, ev.Kind.String())
	}
	return strings.Join(s, " ")
}

// requestBody decodes the body of the i-th request the emulator received.
func requestBody(t *testing.T, i int) map[string]any {
	t.Helper()
	reqs := receivedRequests(t)
	if len(reqs) <= i {
		t.Fatalf("%d requests, want more than %d", len(reqs), i)
	}
	var body map[string]any
	if err := json.Unmarshal(reqs[i].Body, &body); err != nil {
		t.Fatal(err)
	}
	return body
}

type ctxKey struct{}

func TestToolRoundTrip(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			loadScenario(t, scenario(
				toolUse("Let me check.", "call_1", "get_weather", map[string]any{"city": "Paris", "unit": "c"}),
				textAnswer("Sunny in Paris")))
			var calls []GetWeather
			var sawCtx any
			weather := panto.MustNewTool("", "Current weather for a city.",
				func(ctx context.Context, in GetWeather) (string, error) {
					calls = append(calls, in)
					sawCtx = ctx.Value(ctxKey{})
					return "Sunny, 21 °C in " + in.City, nil
				})
			cfg := noCacheConfig(p.name)
			cfg.Tools = []panto.Tool{weather}
			agent := newAgent(t, cfg)
			ctx := context.WithValue(context.Background(), ctxKey{}, "run ctx")
			stream, err := agent.Run(ctx, "Weather in Paris?")
			if err != nil {
				t.Fatal(err)
			}
			var events []panto.Event
			for ev := range stream.Iter {
				// The handler runs after ToolCallStart is yielded, before the next event.
				if ev.Kind == panto.EventToolCallStart && len(calls) != 0 {
					t.Error("the handler ran before its ToolCallStart was yielded")
				}
				if ev.Kind == panto.EventToolResult && len(calls) != 1 {
					t.Error("ToolResult came before the handler ran")
				}
				events = append(events, ev)
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if len(calls) != 1 || calls[0] != (GetWeather{City: "Paris", Unit: "c"}) || sawCtx != "run ctx" {
				t.Fatalf("handler calls %+v, ctx value %v", calls, sawCtx)
			}

			tools := ofKind(events, panto.EventToolDetails, panto.EventMessageEnd, panto.EventToolCallStart,
				panto.EventToolResult, panto.EventMessageStart, panto.EventMessageComplete)
			if got := kinds(tools); got != "message_start tool_details message_end tool_call_start tool_result "+
				"message_start message_end message_complete" {
				t.Fatalf("events: %s", got)
			}
			details, end1, start, result, end2, complete := tools[1], tools[2], tools[3], tools[4], tools[6], tools[7]
			if details.ID != "call_1" || details.Name != "get_weather" || details.Index != 1 {
				t.Errorf("tool_details = %+v", details)
			}
			if end1.StopReason != panto.StopToolUse || end1.Usage.InputTokens != 20 || end1.Usage.OutputTokens != 7 {
				t.Errorf("first message_end = %+v", end1)
			}
			if start.ID != "call_1" || start.Name != "get_weather" || !start.AwaitingResult {
				t.Errorf("tool_call_start = %+v", start)
			}
			jsonEqual(t, start.Input(), `{"city":"Paris","unit":"c"}`)
			if result.ID != "call_1" || result.Name != "get_weather" || result.IsError ||
				result.Text != "Sunny, 21 °C in Paris" {
				t.Errorf("tool_result = %+v", result)
			}
			if end2.StopReason != panto.StopEndTurn || complete.StopReason != panto.StopEndTurn ||
				complete.Usage.InputTokens != 32 || complete.Usage.OutputTokens != 10 {
				t.Errorf("end %+v, complete %+v: want end_turn and the usage summed (32 in, 10 out)", end2, complete)
			}
			if (panto.Event{}).Input() != nil || result.Input() != nil {
				t.Error("Input of another kind than ToolCallStart is not nil")
			}

			// The first request offered the tool as the library exports it.
			first := requestBody(t, 0)
			offered, _ := json.Marshal(first["tools"])
			lib, err := agent.Tools(p.format, true)
			if err != nil {
				t.Fatal(err)
			}
			jsonEqual(t, offered, string(lib))
			mine, _ := panto.ExportTools(p.format, []panto.Tool{weather})
			jsonEqual(t, offered, string(mine))

			// The second request carries the call and its result, in the provider's shape.
			second := requestBody(t, 1)
			msgs, _ := json.Marshal(second["messages"])
			switch p.name {
			case "anthropic":
				jsonEqual(t, msgs, `[
					{"role":"user","content":[{"type":"text","text":"Weather in Paris?"}]},
					{"role":"assistant","content":[{"type":"text","text":"Let me check."},
						{"type":"tool_use","id":"call_1","name":"get_weather","input":{"city":"Paris","unit":"c"}}]},
					{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"Sunny, 21 °C in Paris"}]}]`)
			case "openai":
				var m []map[string]any
				json.Unmarshal(msgs, &m)
				if len(m) != 3 || m[1]["role"] != "assistant" || m[2]["role"] != "tool" ||
					m[2]["tool_call_id"] != "call_1" || !textIs(m[2]["content"], "Sunny, 21 °C in Paris") {
					t.Fatalf("messages = %s", msgs)
				}
				calls, _ := json.Marshal(m[1]["tool_calls"])
				var tc []struct {
					ID       string `json:"id"`
					Type     string `json:"type"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				}
				json.Unmarshal(calls, &tc)
				if len(tc) != 1 || tc[0].ID != "call_1" || tc[0].Type != "function" || tc[0].Function.Name != "get_weather" {
					t.Fatalf("tool_calls = %s", calls)
				}
				jsonEqual(t, []byte(tc[0].Function.Arguments), `{"city":"Paris","unit":"c"}`)
			}

			// The conversation holds the call and the result.
			conv, err := agent.Conversation()
			if err != nil {
				t.Fatal(err)
			}
			var blocks []panto.ContentBlock
			for _, m := range conv {
				blocks = append(blocks, m.Content...)
			}
			var call, res *panto.ContentBlock
			for i := range blocks {
				switch blocks[i].Type {
				case "tool_call":
					call = &blocks[i]
				case "tool_result":
					res = &blocks[i]
				}
			}
			if call == nil || call.ID != "call_1" || call.Name != "get_weather" ||
				res == nil || res.ID != "call_1" || res.Content != "Sunny, 21 °C in Paris" || res.IsError {
				t.Fatalf("conversation: %+v", conv)
			}
			jsonEqual(t, call.Input, `{"city":"Paris","unit":"c"}`)
		})
	}
}

// textIs tells whether an OpenAI message content (a string or text parts) is text.
func textIs(content any, text string) bool {
	switch c := content.(type) {
	case string:
		return c == text
	case []any:
		var b strings.Builder
		for _, p := range c {
			if m, ok := p.(map[string]any); ok {
				s, _ := m["text"].(string)
				b.WriteString(s)
			}
		}
		return b.String() == text
	}
	return false
}

func TestFailingTools(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			loadScenario(t, scenario(
				toolUse("", "call_a", "fails", map[string]any{}, "call_b", "panics", map[string]any{}, "call_c", "works", map[string]any{}),
				textAnswer("Two failed")))
			var mu sync.Mutex
			var ran []string // the handlers run at once: in any order
			handler := func(name string, f func() (string, error)) panto.Tool {
				return panto.Tool{Name: name, Handler: func(context.Context, json.RawMessage) (string, error) {
					mu.Lock()
					ran = append(ran, name)
					mu.Unlock()
					return f()
				}}
			}
			cfg := testConfig(p.name)
			cfg.Tools = []panto.Tool{
				handler("fails", func() (string, error) { return "ignored", errors.New("the city is unknown") }),
				handler("panics", func() (string, error) { panic("boom") }),
				handler("works", func() (string, error) { return "fine", nil }),
			}
			agent := newAgent(t, cfg)
			events := collect(t, run(t, agent, "Go"))
			if err := runErr(events); err != "" {
				t.Fatal(err)
			}
			slices.Sort(ran)
			if got := strings.Join(ran, ","); got != "fails,panics,works" {
				t.Fatalf("the handlers that ran: %s", got)
			}
			results := ofKind(events, panto.EventToolCallStart, panto.EventToolResult)
			if got := kinds(results); got != "tool_call_start tool_call_start tool_call_start tool_result tool_result tool_result" {
				t.Fatalf("events: %s", got)
			}
			want := []struct {
				id, content string
				isError     bool
			}{{"call_a", "the city is unknown", true}, {"call_b", "panic: boom", true}, {"call_c", "fine", false}}
			for i, w := range want {
				if r := results[3+i]; r.ID != w.id || r.Text != w.content || r.IsError != w.isError {
					t.Errorf("result %d = %+v, want %+v", i, r, w)
				}
				jsonEqual(t, results[i].Input(), `{}`)
			}
			// The model saw the failures.
			body, _ := json.Marshal(requestBody(t, 1)["messages"])
			for _, s := range []string{"the city is unknown", "panic: boom", "call_c"} {
				if !strings.Contains(string(body), s) {
					t.Errorf("second request lacks %q: %s", s, body)
				}
			}
			if p.name == "anthropic" && !strings.Contains(string(body), `"is_error":true`) {
				t.Errorf("no is_error in the second request: %s", body)
			}
		})
	}
}

// runErr is "" when the events end with a MessageComplete.
func runErr(events []panto.Event) string {
	if len(events) == 0 || events[len(events)-1].Kind != panto.EventMessageComplete {
		return "the turn did not complete: " + kinds(events)
	}
	return ""
}

func TestManualTools(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			loadScenario(t, scenario(
				toolUse("", "call_1", "get_weather", map[string]any{"city": "Oslo"}),
				textAnswer("Snow in Oslo")))
			var ran atomic.Int32
			weather := panto.MustNewTool("", "", func(context.Context, GetWeather) (string, error) {
				ran.Add(1)
				return "from the handler", nil
			})
			cfg := testConfig(p.name)
			cfg.Tools = []panto.Tool{weather}
			agent := newAgent(t, cfg)
			stream, err := agent.Run(context.Background(), "Weather?", panto.WithManualTools())
			if err != nil {
				t.Fatal(err)
			}
			defer stream.Close()
			var call panto.Event
			for stream.Next() {
				if ev := stream.Event(); ev.Kind == panto.EventToolCallStart {
					call = ev
				}
			}
			if !call.AwaitingResult || call.ID != "call_1" {
				t.Fatalf("tool_call_start = %+v", call)
			}
			// Next stopped: the result is due. Not sticky: asking again gives the same.
			for range 2 {
				err := stream.Err()
				var perr *panto.Error
				if !errors.Is(err, panto.ErrResultPending) || !errors.As(err, &perr) || perr.Message == "" {
					t.Fatalf("Err = %v, want ErrResultPending", err)
				}
				if stream.Next() {
					t.Fatalf("Next without a result gave %+v", stream.Event())
				}
			}
			if err := stream.SubmitToolResult("call_nope", "x", false); !errors.Is(err, panto.ErrNoSuchCall) {
				t.Fatalf("SubmitToolResult with an unknown id: %v", err)
			}
			if err := stream.SubmitToolResult("call_1\xff", "x", false); !errors.Is(err, panto.ErrInvalidArgument) {
				t.Fatalf("SubmitToolResult with an id that is not UTF-8: %v", err)
			}
			if err := stream.SubmitToolResult("call_1", "Snow, -3 °C", false); err != nil {
				t.Fatal(err)
			}
			if err := stream.SubmitToolResult("call_1", "again", false); !errors.Is(err, panto.ErrNoSuchCall) {
				t.Fatalf("a second result for call_1: %v", err)
			}
			var rest []panto.Event
			for stream.Next() {
				rest = append(rest, stream.Event())
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if r := rest[0]; r.Kind != panto.EventToolResult || r.ID != "call_1" || r.Text != "Snow, -3 °C" || r.IsError {
				t.Fatalf("first event after the result: %+v", r)
			}
			if err := runErr(rest); err != "" {
				t.Fatal(err)
			}
			if ran.Load() != 0 {
				t.Fatal("the handler ran in a manual turn")
			}
			if err := stream.SubmitToolResult("call_1", "late", false); !errors.Is(err, panto.ErrClosed) {
				t.Fatalf("SubmitToolResult after the end: %v", err)
			}
			if !strings.Contains(string(mustMarshal(requestBody(t, 1))), "Snow, -3 °C") {
				t.Fatal("the second request lacks the submitted result")
			}
		})
	}
}

func mustMarshal(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func TestToolWithoutHandlerAndSubmitWins(t *testing.T) {
	loadScenario(t, scenario(
		toolUse("", "call_1", "ask_user", map[string]any{}, "call_2", "clock", map[string]any{}),
		textAnswer("Done")))
	var clockRan atomic.Int32
	cfg := testConfig("anthropic")
	cfg.Tools = []panto.Tool{
		{Name: "ask_user", Description: "Ask the user"}, // no Handler: the program answers
		{Name: "clock", Handler: func(context.Context, json.RawMessage) (string, error) {
			clockRan.Add(1)
			return "noon", nil
		}},
	}
	agent := newAgent(t, cfg)
	stream := run(t, agent, "Go")
	var results []panto.Event
	for ev := range stream.Iter {
		if ev.Kind == panto.EventToolCallStart && ev.AwaitingResult {
			switch ev.Name {
			case "ask_user":
				if err := stream.SubmitToolResult(ev.ID, "yes", false); err != nil {
					t.Fatal(err)
				}
			case "clock": // a manual result wins over the handler
				if err := stream.SubmitToolResult(ev.ID, "midnight", true); err != nil {
					t.Fatal(err)
				}
			}
		}
		if ev.Kind == panto.EventToolResult {
			results = append(results, ev)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if clockRan.Load() != 0 {
		t.Error("the handler ran although the program gave the result")
	}
	if len(results) != 2 || results[0].Text != "yes" || results[0].IsError ||
		results[1].Text != "midnight" || !results[1].IsError {
		t.Fatalf("results = %+v", results)
	}
}

func TestCapabilityRefusal(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			loadScenario(t, scenario(
				toolUse("", "call_1", "get_weather", map[string]any{"city": "Rome"}),
				textAnswer("never")))
			var ran atomic.Int32
			weather := panto.MustNewTool("", "", func(context.Context, GetWeather) (string, error) {
				ran.Add(1)
				return "", nil
			}, panto.WithCapabilities("net"))
			cfg := testConfig(p.name)
			cfg.Tools = []panto.Tool{weather}
			cfg.Capabilities = []string{"fs.read"}
			agent := newAgent(t, cfg)
			stream := run(t, agent, "Weather?")
			events := collect(t, stream)
			err := stream.Err()
			if !errors.Is(err, panto.ErrCapability) {
				t.Fatalf("Err = %v after %s, want ErrCapability", err, kinds(events))
			}
			if len(ofKind(events, panto.EventToolCallStart, panto.EventToolResult)) != 0 {
				t.Errorf("a refused call was started: %s", kinds(events))
			}
			if ran.Load() != 0 {
				t.Fatal("the handler of a refused tool ran")
			}
			if n := len(receivedRequests(t)); n != 1 {
				t.Fatalf("%d requests, want 1", n)
			}
			// The tool was not offered to the model.
			if tools, ok := requestBody(t, 0)["tools"]; ok && len(tools.([]any)) != 0 {
				t.Errorf("the request offered %v", tools)
			}
		})
	}
}

// A handler's result goes to the library as it is: the NUL byte reaches the model, and the
// library alone replaces the invalid byte.
func TestResultPassesAsItIs(t *testing.T) {
	loadScenario(t, scenario(toolUse("", "call_1", "raw", map[string]any{}), textAnswer("Ok")))
	cfg := testConfig("anthropic")
	cfg.Tools = []panto.Tool{{Name: "raw", Handler: func(context.Context, json.RawMessage) (string, error) {
		return "a\x00b\xffc", nil
	}}}
	events := collect(t, run(t, newAgent(t, cfg), "Go"))
	if err := runErr(events); err != "" {
		t.Fatal(err)
	}
	if r := ofKind(events, panto.EventToolResult); len(r) != 1 || r[0].Text != "a\x00b\uFFFDc" || r[0].IsError {
		t.Fatalf("results = %+v, want the NUL kept and the bad byte replaced", r)
	}
	msgs, _ := json.Marshal(requestBody(t, 1)["messages"])
	if !strings.Contains(string(msgs), `"content":"a\u0000b`+"\uFFFD"+`c"`) {
		t.Fatalf("the second request's messages: %s", msgs)
	}
}

func TestToolLoopLimit(t *testing.T) {
	call := toolUse("", "call_1", "clock", map[string]any{})
	loadScenario(t, map[string]any{"responses": []any{call}, "repeat_last": true})
	var ran atomic.Int32
	cfg := testConfig("openai")
	cfg.MaxToolIterations = 2
	cfg.Tools = []panto.Tool{{Name: "clock", Handler: func(context.Context, json.RawMessage) (string, error) {
		ran.Add(1)
		return "noon", nil
	}}}
	stream := run(t, newAgent(t, cfg), "Loop")
	collect(t, stream)
	if err := stream.Err(); !errors.Is(err, panto.ErrToolLoop) {
		t.Fatalf("Err = %v, want ErrToolLoop", err)
	}
	if ran.Load() != 2 {
		t.Fatalf("the handler ran %d times, want 2", ran.Load())
	}
}

func TestCancelInHandler(t *testing.T) {
	loadScenario(t, scenario(toolUse("", "call_1", "slow", map[string]any{}), textAnswer("never")))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := testConfig("anthropic")
	cfg.Tools = []panto.Tool{{Name: "slow", Handler: func(ctx context.Context, _ json.RawMessage) (string, error) {
		cancel()
		<-ctx.Done()
		return "", ctx.Err()
	}}}
	agent := newAgent(t, cfg)
	stream, err := agent.Run(ctx, "Go")
	if err != nil {
		t.Fatal(err)
	}
	events := collect(t, stream)
	if err := stream.Err(); !errors.Is(err, context.Canceled) || !errors.Is(err, panto.ErrCanceled) {
		t.Fatalf("Err = %v after %s", err, kinds(events))
	}
	if n := len(receivedRequests(t)); n != 1 {
		t.Fatalf("%d requests, want 1: the result of a canceled turn is not sent", n)
	}
	// The agent takes another turn.
	loadScenario(t, scenario(textAnswer("Hello world")))
	if err := runErr(collect(t, run(t, agent, "Again"))); err != "" {
		t.Fatal(err)
	}
}

func TestReadTool(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("alpha\nbeta\ngamma\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	loadScenario(t, scenario(
		toolUse("", "call_1", "read", map[string]any{"path": "notes.txt", "offset": 1, "limit": 1},
			"call_2", "read", map[string]any{"path": "../escape.txt"}),
		textAnswer("Read it")))
	cfg := testConfig("anthropic")
	cfg.Capabilities = []string{"fs.read"}
	cfg.ReadTool = &panto.ReadToolConfig{Root: root, MaxBytes: 1024}
	agent := newAgent(t, cfg)
	lib, err := agent.Tools(panto.FormatPanto, true)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(lib), `"native":true`) || !strings.Contains(string(lib), `"read"`) {
		t.Fatalf("tools = %s", lib)
	}
	events := collect(t, run(t, agent, "Read"))
	if err := runErr(events); err != "" {
		t.Fatal(err)
	}
	tools := ofKind(events, panto.EventToolCallStart, panto.EventToolResult)
	if len(tools) != 4 || tools[0].AwaitingResult || tools[1].AwaitingResult {
		t.Fatalf("events %+v: the native tool awaits no result", tools)
	}
	if r := tools[2]; r.IsError || !strings.Contains(r.Text, "beta") || strings.Contains(r.Text, "alpha") {
		t.Errorf("read result = %+v", r)
	}
	if r := tools[3]; !r.IsError {
		t.Errorf("a path out of the root: %+v", r)
	}
}

func TestConfigJSON(t *testing.T) {
	cfg := panto.Config{Provider: "anthropic", Model: "m", Capabilities: []string{"net"}, MaxToolIterations: 3,
		ReadTool: &panto.ReadToolConfig{Root: "/srv"}, Tools: []panto.Tool{{Name: "x"}}}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, b, `{"provider":"anthropic","model":"m","capabilities":["net"],"max_tool_iterations":3,"read_tool":{"root":"/srv"}}`)
}

// ---- Example -----------------------------------------------------------------------------

// Weather is the input of the get_weather tool.
type Weather struct {
	City string `json:"city" description:"The city"`
	Unit string `json:"unit,omitempty" enum:"c,f" default:"c"`
}

// Declares a tool from a struct and lets the stream run it during the turn.
func ExampleNewTool() {
	if err := postScenario(scenario(
		toolUse("", "toolu_1", "weather", map[string]any{"city": "Paris"}),
		textAnswer("Sunny in Paris"))); err != nil {
		fmt.Println(err)
		return
	}
	weather, err := panto.NewTool("", "Current weather for a city.",
		func(ctx context.Context, in Weather) (string, error) {
			return fmt.Sprintf("21 °C and sunny in %s", in.City), nil
		}, panto.WithCapabilities("net"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(weather.InputSchema))

	agent, err := panto.NewAgent(panto.Config{
		Provider: "anthropic", Model: "claude-sonnet-4-5", BaseURL: emulatorURL, APIKey: "test-key",
		Tools: []panto.Tool{weather}, Capabilities: []string{"net"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer agent.Close()
	stream, err := agent.Run(context.Background(), "Weather in Paris?")
	if err != nil {
		fmt.Println(err)
		return
	}
	for ev := range stream.Iter {
		switch ev.Kind {
		case panto.EventToolCallStart:
			fmt.Printf("call %s %s\n", ev.Name, ev.Input())
		case panto.EventToolResult:
			fmt.Printf("result %q\n", ev.Text)
		case panto.EventBlockComplete:
			if ev.BlockKind == panto.BlockText {
				fmt.Println(ev.Text)
			}
		}
	}
	if err := stream.Err(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"type":"object","properties":{"city":{"type":"string","description":"The city"},"unit":{"type":"string","enum":["c","f"],"default":"c"}},"required":["city"]}
	// call weather {"city":"Paris"}
	// result "21 °C and sunny in Paris"
	// Sunny in Paris
}
