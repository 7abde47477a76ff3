package proto

import (
	"fmt"
	"os"
	"time"
)

// The latency workload of the Go peers (bench/latency.py; the protocol of
// bench/clients/turnsproto.py): one client, one tool turn, then plain turns.
const (
	ToolPrompt  = "Call ping until you are done (tool rounds: 3)."
	PlainPrompt = "Hello"
	ToolName    = "ping"
	ToolDesc    = "Answers pong."
	ToolResult  = "pong"
)

// ToolProperties is the input schema's properties of the tool `ping`.
var ToolProperties = map[string]any{"round": map[string]any{"type": "integer"}}

// Turns runs turn(ToolPrompt) then `count` × turn(PlainPrompt), timing each; turn returns the
// tool calls it answered and the text bytes it read. Exits 1 on an error.
func Turns(count int, turn func(prompt string) (calls, bytes int, err error)) {
	Ready()
	t := time.Now()
	calls, bytes, err := turn(ToolPrompt)
	fail(err)
	fmt.Printf("TOOL %.6f %d %d\n", time.Since(t).Seconds(), calls, bytes)
	for range count {
		t = time.Now()
		_, bytes, err = turn(PlainPrompt)
		fail(err)
		fmt.Printf("TURN %.6f %d\n", time.Since(t).Seconds(), bytes)
	}
	fmt.Printf("END %.6f\n", CPUSeconds())
}

func fail(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
