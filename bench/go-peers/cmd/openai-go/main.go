// github.com/openai/openai-go as a consumer of `make bench`:
//
//	openai-go raw|accumulate|turns|waiting BASE_URL [STREAMS]
//
// raw: Chat.Completions.NewStreaming, iterating the chunks; accumulate: the same, with every
// chunk also fed to a ChatCompletionAccumulator (the SDK's stream helper).
// turns: the latency workload (turns.go), STREAMS plain turns after a tool turn.
// waiting: STREAMS raw turns at once against a server that answers late (bench/waiting.py).
// BASE_URL is the bench server's base (…/n/N); the client is given BASE_URL/v1/.
package main

import (
	"context"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"panto.dev/bench/go-peers/internal/proto"
)

func main() {
	mode, baseURL, streams := proto.Args()
	client := openai.NewClient(option.WithBaseURL(strings.TrimRight(baseURL, "/")+"/v1/"), option.WithAPIKey("bench"), option.WithMaxRetries(0))
	if mode == "turns" {
		turns(client, streams)
		return
	}
	params := openai.ChatCompletionNewParams{
		Model:         "gpt-4o-mini",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hello")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	accumulate := mode == "accumulate"
	one := func() (events, bytes int, err error) {
		stream := client.Chat.Completions.NewStreaming(context.Background(), params)
		defer stream.Close()
		var acc openai.ChatCompletionAccumulator
		for stream.Next() {
			chunk := stream.Current()
			if accumulate {
				acc.AddChunk(chunk)
			}
			if len(chunk.Choices) > 0 {
				if content := chunk.Choices[0].Delta.Content; content != "" {
					if events == 0 {
						proto.First()
					}
					events++
					bytes += len(content)
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
