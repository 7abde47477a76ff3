package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"panto.dev/panto"
)

// turn is a turn of the case: a text, a list of parts (run with Agent.RunParts), an object
// with "input" (per-turn options, a final helper: final.go), or a step object (steps.go).
type turn struct {
	text    string
	parts   []panto.Part    // nil: the turn is text
	step    *step           // not nil: the turn is a step
	options json.RawMessage // the turn's options; nil: none
	final   string          // "message" or "json": read with that helper
	resume  bool            // the "resume_turn" step: the agent's pending round, not Run
}

func (tn *turn) UnmarshalJSON(data []byte) error {
	if err := json.Unmarshal(data, &tn.text); err == nil {
		return nil
	}
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		var obj struct {
			Input   *turn           `json:"input"`
			Options json.RawMessage `json:"options"`
			Final   string          `json:"final"`
		}
		if err := json.Unmarshal(data, &obj); err == nil && obj.Input != nil && obj.Input.step == nil {
			*tn = *obj.Input
			tn.options, tn.final = obj.Options, obj.Final
			return nil
		}
		tn.step = &step{}
		return json.Unmarshal(data, tn.step)
	}
	var ps []part
	if err := json.Unmarshal(data, &ps); err != nil {
		return errors.New("a turn is a string or a list of parts")
	}
	parts, err := goParts(ps)
	if err != nil {
		return err
	}
	tn.parts = parts
	if tn.parts == nil {
		tn.parts = []panto.Part{}
	}
	return nil
}

// run starts the turn.
func (tn turn) run(ctx context.Context, agent *panto.Agent) (*panto.Stream, error) {
	var opts []panto.RunOption
	if tn.options != nil {
		var compact bytes.Buffer
		if err := json.Compact(&compact, tn.options); err != nil {
			die("a turn's options: " + err.Error())
		}
		opts = append(opts, panto.WithOptionsJSON(compact.Bytes()))
	}
	if tn.resume {
		return agent.ResumeTurn(ctx, opts...)
	}
	if tn.parts != nil {
		return agent.RunParts(ctx, tn.parts, opts...)
	}
	return agent.Run(ctx, tn.text, opts...)
}

// part is a part of the case as the runner rewrites it: a string (text), or
// {"media_path", "hint", "name"}, a generated file to read.
type part struct {
	text  *string
	media struct {
		Path string `json:"media_path"`
		Hint string `json:"hint"`
		Name string `json:"name"`
	}
}

func (p *part) UnmarshalJSON(data []byte) error {
	if err := json.Unmarshal(data, &p.text); err == nil && p.text != nil {
		return nil
	}
	p.text = nil
	if err := json.Unmarshal(data, &p.media); err != nil || p.media.Path == "" {
		return fmt.Errorf("a part is a string or an object with media_path: %s", data)
	}
	return nil
}

// goParts builds the parts with the binding's generic constructors.
func goParts(ps []part) ([]panto.Part, error) {
	var out []panto.Part
	for _, p := range ps {
		if p.text != nil {
			out = append(out, panto.Text(*p.text))
			continue
		}
		data, err := os.ReadFile(p.media.Path)
		if err != nil {
			return nil, err
		}
		out = append(out, panto.Media(data, p.media.Hint).WithName(p.media.Name))
	}
	return out, nil
}

// partLines are the "parts" of a tool_result line: every key always present.
func partLines(parts []panto.PartInfo) []map[string]any {
	lines := make([]map[string]any, 0, len(parts))
	for _, p := range parts {
		data, err := p.Data() // read before the next Next, which ends the loan
		if err != nil {
			die("a tool result's part data: " + err.Error())
		}
		lines = append(lines, map[string]any{
			"kind": p.Kind.String(), "text": p.Text, "media_type": p.MediaType, "name": p.Name,
			"byte_size": p.ByteSize, "width": p.Width, "height": p.Height, "data_len": len(data),
		})
	}
	return lines
}
