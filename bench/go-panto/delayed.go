package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// delayedAnswer is a short Anthropic Messages stream, as the API sends it.
const delayedAnswer = "event: message_start\n" +
	`data: {"type":"message_start","message":{"id":"msg_wait","type":"message","role":"assistant","model":"claude-sonnet-4-6","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1}}}` + "\n\n" +
	"event: content_block_start\n" +
	`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n" +
	"event: content_block_delta\n" +
	`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello from a turn that waited."}}` + "\n\n" +
	"event: content_block_stop\n" +
	`data: {"type":"content_block_stop","index":0}` + "\n\n" +
	"event: message_delta\n" +
	`data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":8}}` + "\n\n" +
	"event: message_stop\n" +
	`data: {"type":"message_stop"}` + "\n\n"

// delayedChatAnswer is the same short answer as an OpenAI Chat Completions stream.
const delayedChatAnswer = `data: {"id":"chatcmpl-wait","object":"chat.completion.chunk","created":1,"model":"gpt-4.1","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n" +
	`data: {"id":"chatcmpl-wait","object":"chat.completion.chunk","created":1,"model":"gpt-4.1","choices":[{"index":0,"delta":{"content":"Hello from a turn that waited."},"finish_reason":null}]}` + "\n\n" +
	`data: {"id":"chatcmpl-wait","object":"chat.completion.chunk","created":1,"model":"gpt-4.1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":8,"total_tokens":20}}` + "\n\n" +
	"data: [DONE]\n\n"

// delayedServer serves POST /v1/messages with delayedAnswer (and /v1/chat/completions with
// delayedChatAnswer, for the OpenAI SDKs beside it), DELAY_MS after each request came, a
// goroutine a connection (so that 10,000 waiting turns cost it little); it prints
// `listening http://127.0.0.1:PORT` first.
func delayedServer(delayMs string) {
	ms, err := strconv.Atoi(delayMs)
	if err != nil || ms < 0 {
		fail(fmt.Errorf("DELAY_MS %q: want a number of milliseconds", delayMs))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	fmt.Printf("listening http://%s\n", ln.Addr())
	delay := time.Duration(ms) * time.Millisecond
	fail(http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		answer := delayedAnswer
		if r.URL.Path == "/v1/chat/completions" {
			answer = delayedChatAnswer
		} else if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
			http.NotFound(w, r)
			return
		}
		time.Sleep(delay)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
		_, _ = io.WriteString(w, answer)
	})))
}
