// Images from Go: a user turn with a picture, and a tool that hands the model another one.
// `image [FILE]`: FILE is an image (PNG, JPEG, GIF, WEBP, BMP) or a PDF; without one the
// example draws a small PNG itself. panto finds the format by the bytes and fits the image
// to the provider's rules. See examples/README.md.
package main

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"

	"panto.dev/examples/internal/envconfig"
	"panto.dev/panto"
)

// gradient draws a w×h PNG: what a program would read from a file or a screen.
func gradient(w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, color.RGBA{R: 200, G: uint8(y * 5), B: uint8(x * 4), A: 255})
		}
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}

type screenshotInput struct{}

func main() {
	picture := panto.Media(gradient(64, 48), "image/png").WithName("gradient.png")
	if len(os.Args) > 1 {
		var err error
		if picture, err = panto.MediaFile(os.Args[1]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}

	// The tool returns raw bytes as a part; panto does the rest.
	screenshot := panto.MustNewTool("screenshot", "Takes a screenshot of the screen.",
		func(ctx context.Context, _ screenshotInput) ([]panto.Part, error) {
			return []panto.Part{
				panto.Text("The screen right now:"),
				panto.Media(gradient(32, 32), "").WithName("screen.png"),
			}, nil
		})
	cfg := envconfig.Config()
	cfg.Tools = []panto.Tool{screenshot}
	agent, err := panto.NewAgent(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer agent.Close()

	stream, err := agent.RunParts(context.Background(), []panto.Part{
		panto.Text("What is in this picture? Then take a screenshot and compare."),
		picture,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Print("[go] ")
	for ev := range stream.Iter {
		switch {
		case ev.Kind == panto.EventToolCallStart:
			fmt.Printf("\n  -> %s(%s)\n", ev.Name, ev.Input())
		case ev.Kind == panto.EventToolResult:
			for _, p := range ev.Parts() { // what was sent: after fitting
				if p.Kind == panto.PartText {
					fmt.Printf("  <- %s\n", p.Text)
				} else {
					fmt.Printf("  <- %s %s, %dx%d, %d bytes\n", p.Kind, p.MediaType, p.Width, p.Height, p.ByteSize)
				}
			}
		case ev.Kind == panto.EventContentDelta && ev.BlockKind == panto.BlockText:
			fmt.Print(ev.Text)
		}
	}
	fmt.Println()
	if err := stream.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "turn failed:", err)
		os.Exit(1)
	}
}
