package main

import (
	"context"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"panto.dev/bench/go-peers/internal/proto"
)

// turns is the latency workload (bench/latency.py) on one client, with the tool loop by hand
// as the SDK's users write it: stream a message (Message.Accumulate builds it), and while it
// stops for tool_use, append it and the tools' results to the conversation and ask again. The
// conversation carries over from turn to turn, as panto's agent does.
func turns(client anthropic.Client, count int) {
	tools := []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{
		Name:        proto.ToolName,
		Description: anthropic.String(proto.ToolDesc),
		InputSchema: anthropic.ToolInputSchemaParam{Properties: proto.ToolProperties},
	}}}
	var messages []anthropic.MessageParam
	proto.Turns(count, func(prompt string) (calls, bytes int, err error) {
		messages = append(messages, anthropic.NewUserMessage(anthropic.NewTextBlock(prompt)))
		for {
			stream := client.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{
				Model: "claude-sonnet-4-6", MaxTokens: 1024, Messages: messages, Tools: tools,
			})
			var message anthropic.Message
			for stream.Next() {
				event := stream.Current()
				if err := message.Accumulate(event); err != nil {
					stream.Close()
					return calls, bytes, err
				}
				if ev, ok := event.AsAny().(anthropic.ContentBlockDeltaEvent); ok {
					if d, ok := ev.Delta.AsAny().(anthropic.TextDelta); ok {
						bytes += len(d.Text)
					}
				}
			}
			err := stream.Err()
			stream.Close()
			if err != nil {
				return calls, bytes, err
			}
			messages = append(messages, message.ToParam())
			if message.StopReason != anthropic.StopReasonToolUse {
				return calls, bytes, nil
			}
			var results []anthropic.ContentBlockParamUnion
			for _, block := range message.Content {
				if use, ok := block.AsAny().(anthropic.ToolUseBlock); ok {
					calls++
					results = append(results, anthropic.NewToolResultBlock(use.ID, proto.ToolResult, false))
				}
			}
			messages = append(messages, anthropic.NewUserMessage(results...))
		}
	})
}
