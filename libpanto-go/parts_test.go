package panto_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"panto.dev/panto"
)

// pdfDocument is a small PDF.
var pdfDocument = []byte("%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n")

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func TestPartConstructors(t *testing.T) {
	img := chart(2, 2)
	if p := panto.Text("hi"); p.Kind() != panto.PartText || p.Text() != "hi" || p.Data() != nil {
		t.Errorf("Text: %+v", p)
	}
	if p := (panto.Part{}); p.Kind() != panto.PartText || p.Text() != "" {
		t.Errorf("the zero Part is not an empty text: %+v", p)
	}
	p := panto.Media(img, "image/png").WithName("dot.png")
	if p.Kind() != panto.PartMedia || &p.Data()[0] != &img[0] || p.Hint() != "image/png" || p.Name() != "dot.png" {
		t.Errorf("Media: kind %v, hint %q, name %q, data shared %v", p.Kind(), p.Hint(), p.Name(), &p.Data()[0] == &img[0])
	}

	path := filepath.Join(t.TempDir(), "shot.png")
	if err := os.WriteFile(path, img, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := panto.MediaFile(path)
	if err != nil || f.Kind() != panto.PartMedia || !bytes.Equal(f.Data(), img) || f.Name() != "shot.png" || f.Hint() != "" {
		t.Errorf("MediaFile: %+v, %v", f, err)
	}
	f, err = panto.MediaFile(filepath.Join(t.TempDir(), "missing.png"))
	if !errors.Is(err, fs.ErrNotExist) || f.Kind() != panto.PartText || f.Data() != nil {
		t.Errorf("MediaFile of a missing file: %+v, %v", f, err)
	}

	if got := fmt.Sprint(p, panto.Text("hi")); got != `media "dot.png" (`+fmt.Sprint(len(img))+` bytes, hint "image/png") text "hi"` {
		t.Errorf("Part.String: %s", got)
	}
	infos := []panto.PartInfo{{Kind: panto.PartText, Text: "a"},
		{Kind: panto.PartImage, MediaType: "image/png", Width: 3, Height: 2, ByteSize: 80},
		{Kind: panto.PartDocument, MediaType: "application/pdf", Name: "r.pdf", ByteSize: 600}}
	if got := fmt.Sprint(infos); got != `[text "a" image image/png 3x2, 80 bytes document application/pdf "r.pdf", 600 bytes]` {
		t.Errorf("PartInfo.String: %s", got)
	}

	for k, name := range map[panto.PartKind]string{panto.PartText: "text", panto.PartMedia: "media",
		panto.PartImage: "image", panto.PartDocument: "document", 99: "unknown"} {
		if k.String() != name {
			t.Errorf("PartKind(%d).String() = %q, want %q", k, k.String(), name)
		}
	}
}

func TestRunPartsSendsTextAndImage(t *testing.T) {
	img := chart(3, 2)
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			loadScenario(t, scenario(textAnswer("A small picture")))
			agent := newAgent(t, noCacheConfig(p.name))
			given := bytes.Clone(img)
			stream, err := agent.RunParts(context.Background(),
				[]panto.Part{panto.Text("What is in this picture?"), panto.Media(given, "image/png")})
			if err != nil {
				t.Fatal(err)
			}
			clear(given) // the library read the bytes during RunParts: they are the program's again
			collect(t, stream)
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}

			msgs, _ := json.Marshal(requestBody(t, 0)["messages"])
			switch p.name {
			case "anthropic":
				jsonEqual(t, msgs, `[{"role":"user","content":[{"type":"text","text":"What is in this picture?"},
					{"type":"image","source":{"type":"base64","media_type":"image/png","data":"`+b64(img)+`"}}]}]`)
			case "openai":
				jsonEqual(t, msgs, `[{"role":"user","content":[{"type":"text","text":"What is in this picture?"},
					{"type":"image_url","image_url":{"url":"data:image/png;base64,`+b64(img)+`"}}]}]`)
			}

			conv, err := agent.Conversation()
			if err != nil {
				t.Fatal(err)
			}
			user := conv[0].Content
			if len(user) != 2 || user[0].Type != "text" || user[0].Text != "What is in this picture?" ||
				user[1].Type != "image" || user[1].MediaType != "image/png" || user[1].Data != b64(img) {
				t.Fatalf("the user message kept: %+v", user)
			}
			if got, err := user[1].Bytes(); err != nil || !bytes.Equal(got, img) {
				t.Fatalf("the image's Bytes: %v", err)
			}
		})
	}
}

type Snapshot struct {
	Page string `json:"page"`
}

func TestToolReturningParts(t *testing.T) {
	img := chart(3, 2)
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			loadScenario(t, scenario(
				toolUse("", "call_1", "snapshot", map[string]any{"page": "home"}),
				textAnswer("I see it")))
			snapshot := panto.MustNewTool("", "A snapshot of a page and its report.",
				func(_ context.Context, in Snapshot) ([]panto.Part, error) {
					return []panto.Part{panto.Text("The " + in.Page + " page:"), panto.Media(img, ""),
						panto.Media(pdfDocument, "application/pdf").WithName("report.pdf")}, nil
				})
			if snapshot.Handler != nil || snapshot.PartsHandler == nil {
				t.Fatal("NewTool with a function returning parts did not make a PartsHandler")
			}
			cfg := testConfig(p.name)
			cfg.Tools = []panto.Tool{snapshot}
			agent := newAgent(t, cfg)
			stream := run(t, agent, "Show me the home page")
			var result panto.Event
			for stream.Next() {
				if ev := stream.Event(); ev.Kind == panto.EventToolResult {
					result = ev
					break
				}
			}
			if result.ID != "call_1" || result.IsError || result.Text != "The home page:" {
				t.Fatalf("tool_result = %+v (Err %v)", result, stream.Err())
			}
			parts := result.Parts()
			if len(parts) != 3 {
				t.Fatalf("parts = %+v", parts)
			}
			text, shot, report := parts[0], parts[1], parts[2]
			if text.Kind != panto.PartText || text.Text != "The home page:" {
				t.Errorf("part 0 = %+v", text)
			}
			if shot.Kind != panto.PartImage || shot.MediaType != "image/png" || shot.ByteSize != int64(len(img)) ||
				shot.Width != 3 || shot.Height != 2 || shot.Name != "" {
				t.Errorf("part 1 = %+v", shot)
			}
			if report.Kind != panto.PartDocument || report.MediaType != "application/pdf" ||
				report.ByteSize != int64(len(pdfDocument)) || report.Name != "report.pdf" {
				t.Errorf("part 2 = %+v", report)
			}
			if data, err := text.Data(); data != "" || err != nil {
				t.Errorf("a text part's Data = %q, %v", data, err)
			}
			// The image's data is read before the next Next, the report's after it.
			if data, err := shot.Data(); err != nil || data != b64(img) {
				t.Fatalf("the image's Data: %v", err)
			}
			if !stream.Next() {
				t.Fatal(stream.Err())
			}
			if data, err := shot.Data(); err != nil || data != b64(img) {
				t.Errorf("the image's Data once taken, after the next Next: %v", err)
			}
			if got, err := shot.Bytes(); err != nil || !bytes.Equal(got, img) {
				t.Errorf("the image's Bytes after the next Next: %v", err)
			}
			if data, err := report.Data(); !errors.Is(err, panto.ErrDataReleased) || data != "" {
				t.Errorf("the report's Data after the next Next = %q, %v; want ErrDataReleased", data, err)
			}
			if got, err := report.Bytes(); !errors.Is(err, panto.ErrDataReleased) || got != nil {
				t.Errorf("the report's Bytes after the next Next: %v", err)
			}
			for stream.Next() {
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}

			body := string(mustMarshal(requestBody(t, 1)))
			for _, want := range []string{b64(img), b64(pdfDocument), "report.pdf", "The home page:"} {
				if !strings.Contains(body, want) {
					t.Errorf("the second request lacks %.40q", want)
				}
			}
			conv, err := agent.Conversation()
			if err != nil {
				t.Fatal(err)
			}
			res := conv[2].Content[0]
			if res.Type != "tool_result" || res.ID != "call_1" || res.Content != "" || len(res.Parts) != 3 ||
				res.Parts[0].Text != "The home page:" || res.Parts[1].Type != "image" ||
				res.Parts[2].Type != "document" || res.Parts[2].Name != "report.pdf" {
				t.Fatalf("the tool result kept: %+v", res)
			}
			if got, err := res.Parts[2].Bytes(); err != nil || !bytes.Equal(got, pdfDocument) {
				t.Fatalf("the report kept: %v", err)
			}
		})
	}
}

// A tool result whose parts are all text is one text, as a Handler's.
func TestToolReturningOnlyTextParts(t *testing.T) {
	loadScenario(t, scenario(toolUse("", "call_1", "snapshot", map[string]any{"page": "a"}), textAnswer("ok")))
	cfg := testConfig("anthropic")
	cfg.Tools = []panto.Tool{panto.MustNewTool("", "", func(context.Context, Snapshot) ([]panto.Part, error) {
		return []panto.Part{panto.Text("one"), panto.Text("two")}, nil
	})}
	agent := newAgent(t, cfg)
	results := ofKind(collect(t, run(t, agent, "Go")), panto.EventToolResult)
	if len(results) != 1 || results[0].Text != "one\ntwo" || results[0].Parts() != nil {
		t.Fatalf("results = %+v", results)
	}
}

func TestFailingPartsHandler(t *testing.T) {
	loadScenario(t, scenario(
		toolUse("", "call_1", "fails", map[string]any{}, "call_2", "panics", map[string]any{}),
		textAnswer("ok")))
	img := chart(1, 1)
	cfg := testConfig("anthropic")
	cfg.Tools = []panto.Tool{
		{Name: "fails", PartsHandler: func(context.Context, json.RawMessage) ([]panto.Part, error) {
			return []panto.Part{panto.Media(img, "")}, errors.New("camera offline")
		}},
		{Name: "panics", PartsHandler: func(context.Context, json.RawMessage) ([]panto.Part, error) {
			panic("lens cap")
		}},
	}
	agent := newAgent(t, cfg)
	stream := run(t, agent, "Go")
	results := ofKind(collect(t, stream), panto.EventToolResult)
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 || results[0].Text != "camera offline" || !results[0].IsError || results[0].Parts() != nil ||
		results[1].Text != "panic: lens cap" || !results[1].IsError || results[1].Parts() != nil {
		t.Fatalf("results = %+v", results)
	}
}

func TestSubmitToolResultParts(t *testing.T) {
	img := chart(2, 5)
	loadScenario(t, scenario(toolUse("", "call_1", "camera", map[string]any{}), textAnswer("Nice")))
	cfg := testConfig("openai")
	cfg.Tools = []panto.Tool{{Name: "camera", Description: "Takes a picture"}} // the program answers
	agent := newAgent(t, cfg)
	stream := run(t, agent, "Take a picture")
	for stream.Next() {
	}
	if err := stream.Err(); !errors.Is(err, panto.ErrResultPending) {
		t.Fatalf("Err = %v, want ErrResultPending", err)
	}
	parts := []panto.Part{panto.Text("Blurry:"), panto.Media(img, "image/png")}

	// A wrong id changes nothing: the call still awaits its result.
	if err := stream.SubmitToolResultParts("call_nope", parts, false); !errors.Is(err, panto.ErrNoSuchCall) {
		t.Fatalf("SubmitToolResultParts with an unknown id: %v", err)
	}
	if stream.Next() || !errors.Is(stream.Err(), panto.ErrResultPending) {
		t.Fatalf("after a wrong id, Next: %+v, %v", stream.Event(), stream.Err())
	}
	if err := stream.SubmitToolResultParts("call_1", parts, true); err != nil {
		t.Fatal(err)
	}
	if !stream.Next() {
		t.Fatal(stream.Err())
	}
	ev := stream.Event()
	got := ev.Parts()
	if ev.Kind != panto.EventToolResult || !ev.IsError || ev.Text != "Blurry:" || len(got) != 2 ||
		got[1].Kind != panto.PartImage || got[1].Width != 2 || got[1].Height != 5 {
		t.Fatalf("tool_result = %+v, parts %+v", ev, got)
	}
	if data, err := got[1].Bytes(); err != nil || !bytes.Equal(data, img) {
		t.Fatalf("the image's Bytes: %v", err)
	}
	for stream.Next() {
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if err := stream.SubmitToolResultParts("call_1", parts, false); !errors.Is(err, panto.ErrClosed) {
		t.Fatalf("SubmitToolResultParts after the end: %v", err)
	}
	if body := string(mustMarshal(requestBody(t, 1))); !strings.Contains(body, "data:image/png;base64,"+b64(img)) {
		t.Fatal("the second request lacks the image")
	}
}

// Stream.Events reads on once an event is delivered: the data of its parts is kept.
func TestEventsKeepsPartData(t *testing.T) {
	img := chart(4, 4)
	loadScenario(t, scenario(toolUse("", "call_1", "snapshot", map[string]any{"page": "a"}), textAnswer("ok")))
	cfg := testConfig("anthropic")
	cfg.Tools = []panto.Tool{panto.MustNewTool("", "", func(context.Context, Snapshot) ([]panto.Part, error) {
		return []panto.Part{panto.Media(img, "image/png")}, nil
	})}
	agent := newAgent(t, cfg)
	stream := run(t, agent, "Go")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var result panto.Event
	var after []panto.Event
	for ev := range stream.Events(ctx) {
		if ev.Kind == panto.EventToolResult {
			result = ev
		} else if result.Kind == panto.EventToolResult {
			after = append(after, ev) // the goroutine has read on
		}
	}
	if err := stream.Err(); err != nil || len(after) == 0 {
		t.Fatalf("Err %v, %d events after the result", err, len(after))
	}
	parts := result.Parts()
	if len(parts) != 1 {
		t.Fatalf("parts = %+v", parts)
	}
	if data, err := parts[0].Bytes(); err != nil || !bytes.Equal(data, img) {
		t.Fatalf("the image's Bytes after the turn: %v", err)
	}
}

// Media the library cannot send becomes a text part saying so, and the turn goes on.
func TestBadMediaBecomesANote(t *testing.T) {
	loadScenario(t, scenario(textAnswer("ok")))
	agent := newAgent(t, testConfig("anthropic"))
	stream, err := agent.RunParts(context.Background(),
		[]panto.Part{panto.Text("Look"), panto.Media([]byte("not an image at all"), "image/png").WithName("x.png")})
	if err != nil {
		t.Fatal(err)
	}
	collect(t, stream)
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	conv, err := agent.Conversation()
	if err != nil {
		t.Fatal(err)
	}
	user := conv[0].Content
	if len(user) != 2 || user[1].Type != "text" || !strings.HasPrefix(user[1].Text, "[attachment x.png dropped: ") {
		t.Fatalf("the user message kept: %+v", user)
	}
}

func TestPartsRefusedLeaveStateUnchanged(t *testing.T) {
	loadScenario(t, scenario(textAnswer("first")))
	agent := newAgent(t, testConfig("anthropic"))
	first := run(t, agent, "Hello")

	// Another turn while the first is unfinished: refused, the conversation unchanged.
	img := chart(1, 1)
	if _, err := agent.RunParts(context.Background(), []panto.Part{panto.Media(img, "")}); !errors.Is(err, panto.ErrBusy) {
		t.Fatalf("RunParts while a stream is unfinished: %v", err)
	}
	collect(t, first)
	if err := first.Err(); err != nil {
		t.Fatal(err)
	}
	conv, err := agent.Conversation()
	if err != nil {
		t.Fatal(err)
	}
	if len(conv) != 2 || len(conv[0].Content) != 1 || conv[0].Content[0].Text != "Hello" {
		t.Fatalf("conversation after the refused RunParts: %+v", conv)
	}

	// A tool with both handlers: refused, not added.
	both := panto.Tool{Name: "both",
		Handler:      func(context.Context, json.RawMessage) (string, error) { return "", nil },
		PartsHandler: func(context.Context, json.RawMessage) ([]panto.Part, error) { return nil, nil }}
	for what, err := range map[string]error{"AddTool": agent.AddTool(both), "Validate": both.Validate()} {
		var perr *panto.Error
		if !errors.Is(err, panto.ErrConfig) || !errors.As(err, &perr) || !strings.Contains(perr.Message, "PartsHandler") {
			t.Errorf("%s of a tool with two handlers: %v", what, err)
		}
	}
	if tools, err := agent.Tools(panto.FormatPanto, false); err != nil || strings.Contains(string(tools), "both") {
		t.Fatalf("tools after the refused AddTool: %s, %v", tools, err)
	}

	agent.Close()
	if _, err := agent.RunParts(context.Background(), []panto.Part{panto.Text("Hi")}); !errors.Is(err, panto.ErrClosed) {
		t.Fatalf("RunParts after Close: %v", err)
	}
}

func TestContentBlockJSON(t *testing.T) {
	const js = `{"type":"tool_result","id":"call_1","content":[{"type":"text","text":"Here"},
		{"type":"image","media_type":"image/png","data":"aGk="}],"is_error":true}`
	var b panto.ContentBlock
	if err := json.Unmarshal([]byte(js), &b); err != nil {
		t.Fatal(err)
	}
	if b.Type != "tool_result" || b.ID != "call_1" || !b.IsError || b.Content != "" || len(b.Parts) != 2 ||
		b.Parts[0].Text != "Here" || b.Parts[1].MediaType != "image/png" || b.Parts[1].Data != "aGk=" {
		t.Fatalf("decoded %+v", b)
	}
	if data, err := b.Parts[1].Bytes(); err != nil || string(data) != "hi" {
		t.Fatalf("Bytes = %q, %v", data, err)
	}
	out, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, out, `{"type":"tool_result","text":"","id":"call_1","content":[{"type":"text","text":"Here"},
		{"type":"image","text":"","media_type":"image/png","data":"aGk="}],"is_error":true}`)

	var plain panto.ContentBlock
	if err := json.Unmarshal([]byte(`{"type":"tool_result","id":"c","content":"Sunny"}`), &plain); err != nil ||
		plain.Content != "Sunny" || plain.Parts != nil {
		t.Fatalf("a text result decoded as %+v, %v", plain, err)
	}
}
