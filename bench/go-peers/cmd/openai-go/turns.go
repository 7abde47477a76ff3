package main

import (
	"context"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"panto.dev/bench/go-peers/internal/proto"
)

// turns is the latency workload (bench/latency.py) on one client, with the tool loop by hand
// as the SDK's users write it: stream a completion (a ChatCompletionAccumulator builds it),
// and while it stops for tool_calls, append it and the tools' results to the conversation and
// ask again. The conversation carries over from turn to turn, as panto's agent does.
func turns(client openai.Client, count int) {
	tools := []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name:        proto.ToolName,
		Description: openai.String(proto.ToolDesc),
		Parameters:  shared.FunctionParameters{"type": "object", "properties": proto.ToolProperties},
	})}
	var messages []openai.ChatCompletionMessageParamUnion
	proto.Turns(count, func(prompt string) (calls, bytes int, err error) {
		messages = append(messages, openai.UserMessage(prompt))
		for {
			stream := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
				Model:         "gpt-4o-mini",
				Messages:      messages,
				Tools:         tools,
				StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
			})
			var acc openai.ChatCompletionAccumulator
			for stream.Next() {
				chunk := stream.Current()
				acc.AddChunk(chunk)
				if len(chunk.Choices) > 0 {
					bytes += len(chunk.Choices[0].Delta.Content)
				}
			}
			err := stream.Err()
			stream.Close()
			if err != nil {
				return calls, bytes, err
			}
			choice := acc.Choices[0]
			messages = append(messages, choice.Message.ToParam())
			if choice.FinishReason != "tool_calls" {
				return calls, bytes, nil
			}
			for _, call := range choice.Message.ToolCalls {
				calls++
				messages = append(messages, openai.ToolMessage(proto.ToolResult, call.ID))
			}
		}
	})
}
