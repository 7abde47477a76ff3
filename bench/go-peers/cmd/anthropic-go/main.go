// github.com/anthropics/anthropic-sdk-go as a consumer of `make bench`:
//
//	anthropic-go raw|accumulate|turns|waiting BASE_URL [STREAMS]
//
// raw: Messages.NewStreaming, iterating the events; accumulate: the same, with every event
// also fed to Message.Accumulate (the SDK's way to build the message while streaming).
// turns: the latency workload (turns.go), STREAMS plain turns after a tool turn.
// waiting: STREAMS raw turns at once against a server that answers late (bench/waiting.py).
// STREAMS > 1: as many goroutines sharing one client.
package main

import (
	"context"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"panto.dev/bench/go-peers/internal/proto"
)

func main() {
	mode, baseURL, streams := proto.Args()
	client := anthropic.NewClient(option.WithBaseURL(baseURL), option.WithAPIKey("bench"), option.WithMaxRetries(0))
	if mode == "turns" {
		turns(client, streams)
		return
	}
	params := anthropic.MessageNewParams{
		Model:     "claude-sonnet-4-6",
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Hello"))},
	}
	accumulate := mode == "accumulate"
	one := func() (events, bytes int, err error) {
		stream := client.Messages.NewStreaming(context.Background(), params)
		defer stream.Close()
		var message anthropic.Message
		for stream.Next() {
			event := stream.Current()
			if accumulate {
				if err := message.Accumulate(event); err != nil {
					return events, bytes, err
				}
			}
			if ev, ok := event.AsAny().(anthropic.ContentBlockDeltaEvent); ok {
				if d, ok := ev.Delta.AsAny().(anthropic.TextDelta); ok {
					if events == 0 {
						proto.First()
					}
					events++
					bytes += len(d.Text)
				}
			}
		}
		return events, bytes, stream.Err()
	}
	if mode == "waiting" {
		proto.Waiting(streams, one)
		return
	}
	proto.Ready()
	proto.Run(streams, one)
}
