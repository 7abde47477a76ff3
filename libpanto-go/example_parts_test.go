package panto_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"

	"panto.dev/panto"
)

// chart draws a w×h PNG: what a program would read from a file (panto.MediaFile) or get
// from a screenshot.
func chart(w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, color.RGBA{R: uint8(x), G: uint8(y), B: 128, A: 255})
		}
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}

// Asks the model about an image. The emulator's answer lists what arrived.
func ExampleAgent_RunParts() {
	if err := postScenario(scenario(map[string]any{"describe_media": true})); err != nil {
		fmt.Println(err)
		return
	}
	agent, err := panto.NewAgent(panto.Config{
		Provider: "anthropic", Model: "claude-sonnet-4-5", BaseURL: emulatorURL, APIKey: "test-key",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer agent.Close()

	stream, err := agent.RunParts(context.Background(), []panto.Part{
		panto.Text("What does this chart show?"),
		panto.Media(chart(64, 48), "image/png"),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for ev := range stream.Iter {
		if ev.Kind == panto.EventBlockComplete && ev.BlockKind == panto.BlockText {
			fmt.Println(ev.Text)
		}
	}
	if err := stream.Err(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// Received 1 attachment: image/png 64x48.
}

type Plot struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

// A tool that returns an image, and the parts its ToolResult reports.
func ExampleNewTool_parts() {
	if err := postScenario(scenario(
		toolUse("", "toolu_1", "plot", map[string]any{"width": 64, "height": 48}),
		map[string]any{"describe_media": true})); err != nil {
		fmt.Println(err)
		return
	}
	plot, err := panto.NewTool("", "Plots the data.",
		func(ctx context.Context, in Plot) ([]panto.Part, error) {
			return []panto.Part{panto.Text("The plot:"), panto.Media(chart(in.Width, in.Height), "image/png")}, nil
		})
	if err != nil {
		fmt.Println(err)
		return
	}
	agent, err := panto.NewAgent(panto.Config{
		Provider: "openai", Model: "gpt-test", BaseURL: emulatorURL, APIKey: "test-key",
		Tools: []panto.Tool{plot},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer agent.Close()
	stream, err := agent.Run(context.Background(), "Plot it")
	if err != nil {
		fmt.Println(err)
		return
	}
	for ev := range stream.Iter {
		switch ev.Kind {
		case panto.EventToolResult:
			for _, p := range ev.Parts() {
				if p.Kind == panto.PartText {
					fmt.Printf("%s %q\n", p.Kind, p.Text)
				} else {
					fmt.Printf("%s %s %dx%d\n", p.Kind, p.MediaType, p.Width, p.Height)
				}
			}
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
	// text "The plot:"
	// image image/png 64x48
	// Received 1 attachment: image/png 64x48.
}
