package panto_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"panto.dev/panto"
)

// exampleAgent is an agent talking to the emulator that TestMain starts, after loading the
// answers it gives; a real program leaves BaseURL empty.
func exampleAgent(cfg panto.Config, answers ...map[string]any) (*panto.Agent, error) {
	if err := postScenario(scenario(answers...)); err != nil {
		return nil, err
	}
	cfg.Provider, cfg.Model, cfg.BaseURL, cfg.APIKey = "anthropic", "claude-sonnet-4-5", emulatorURL, "test-key"
	return panto.NewAgent(cfg)
}

// finish reads a turn to its end.
func finish(stream *panto.Stream, err error) error {
	if err != nil {
		return err
	}
	for range stream.Iter {
	}
	return stream.Err()
}

// Saves a conversation and carries it on in another agent (of any language: the document
// is the same everywhere).
func ExampleAgent_Export() {
	agent, err := exampleAgent(panto.Config{}, textAnswer("Paris."), textAnswer("About 2 million."))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer agent.Close()
	if err := finish(agent.Run(context.Background(), "The capital of France?")); err != nil {
		fmt.Println(err)
		return
	}
	doc, err := agent.Export()
	if err != nil {
		fmt.Println(err)
		return
	}

	other, err := panto.NewAgent(panto.Config{Provider: "anthropic", Model: "claude-sonnet-4-5",
		BaseURL: emulatorURL, APIKey: "test-key"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer other.Close()
	if err := other.Import(doc); err != nil {
		fmt.Println(err)
		return
	}
	if err := finish(other.Run(context.Background(), "Its population?")); err != nil {
		fmt.Println(err)
		return
	}
	msgs, err := other.Conversation()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range msgs {
		fmt.Printf("%s: %s\n", m.Role, m.Content[0].Text)
	}
	// Output:
	// user: The capital of France?
	// assistant: Paris.
	// user: Its population?
	// assistant: About 2 million.
}

// A turn that fails before any answer leaves nothing in the conversation, so the next
// request does not carry two user messages in a row. RollbackTurn forgets a failed or
// canceled turn that kept something (a partial answer, tool rounds); after this one it
// removes nothing.
func ExampleAgent_RollbackTurn() {
	refused := map[string]any{"status": 400,
		"error": map[string]any{"type": "invalid_request_error", "message": "prompt is too long"}}
	agent, err := exampleAgent(panto.Config{}, refused, textAnswer("Hello!"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer agent.Close()
	if err := finish(agent.Run(context.Background(), "A very long question")); err != nil {
		fmt.Println("failed:", errors.Is(err, panto.ErrInvalidRequest))
		removed, err := agent.RollbackTurn()
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("removed", removed)
	}
	if err := finish(agent.Run(context.Background(), "A short one")); err != nil {
		fmt.Println(err)
		return
	}
	n, _ := agent.MessageCount()
	fmt.Println(n, "messages")
	// Output:
	// failed: true
	// removed 0
	// 2 messages
}

// Summarizes the older messages on demand; a turn does the same by itself before a request
// that would not fit the model's context window.
func ExampleAgent_Compact() {
	agent, err := exampleAgent(panto.Config{Compaction: &panto.Compaction{KeepRecentTokens: 1}},
		textAnswer("Hello! How can I help?"), textAnswer("The user greeted the assistant."))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer agent.Close()
	if err := finish(agent.Run(context.Background(), "Hello")); err != nil {
		fmt.Println(err)
		return
	}
	stream, err := agent.Compact(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	for ev := range stream.Iter {
		switch ev.Kind {
		case panto.EventCompactionStart:
			fmt.Println("compacting:", ev.Text)
		case panto.EventCompactionEnd:
			fmt.Printf("%d message(s) summarized: %s\n", ev.MessageCount, ev.Text)
		}
	}
	if err := stream.Err(); err != nil {
		fmt.Println(err)
		return
	}
	msgs, _ := agent.Conversation()
	fmt.Println(len(msgs), "messages, the first a summary:", msgs[0].Compaction != nil)
	// Output:
	// compacting: manual
	// 1 message(s) summarized: The user greeted the assistant.
	// 2 messages, the first a summary: true
}

// Keeps a conversation in a session file: a later agent (of a later process) resumes it.
func ExampleSession() {
	dir, err := os.MkdirTemp("", "panto-sessions-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	session := &panto.Session{Dir: dir, ID: "geography"}

	agent, err := exampleAgent(panto.Config{Session: session}, textAnswer("Paris."), textAnswer("Berlin."))
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := finish(agent.Run(context.Background(), "The capital of France?")); err != nil {
		fmt.Println(err)
	}
	agent.Close()

	session.Mode = panto.SessionResume
	agent, err = panto.NewAgent(panto.Config{Provider: "anthropic", Model: "claude-sonnet-4-5",
		BaseURL: emulatorURL, APIKey: "test-key", Session: session})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer agent.Close()
	info, _ := agent.Session()
	n, _ := agent.MessageCount()
	fmt.Printf("session %s resumed: %v, %d messages\n", info.ID, info.Resumed, n)
	if err := finish(agent.Run(context.Background(), "And of Germany?")); err != nil {
		fmt.Println(err)
	}

	_, err = panto.NewAgent(panto.Config{Provider: "anthropic", Model: "claude-sonnet-4-5",
		Session: &panto.Session{Dir: dir, ID: "history", Mode: panto.SessionResume}})
	fmt.Println("no such session:", errors.Is(err, fs.ErrNotExist))
	// Output:
	// session geography resumed: true, 2 messages
	// no such session: true
}

// Branches a session, as an editor's "edit and retry" does, then lists the sessions.
func ExampleAgent_Fork() {
	dir, err := os.MkdirTemp("", "panto-sessions-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	agent, err := exampleAgent(panto.Config{Session: &panto.Session{Dir: dir, ID: "poems"}},
		textAnswer("A haiku."), textAnswer("Another haiku."), textAnswer("A limerick."))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer agent.Close()
	for _, text := range []string{"Write a haiku", "Another one"} {
		if err := finish(agent.Run(context.Background(), text)); err != nil {
			fmt.Println(err)
		}
	}
	// Go on from the first exchange in a new session; "poems" stays as it was.
	if _, err := agent.Fork(2, "limerick"); err != nil {
		fmt.Println(err)
		return
	}
	if err := finish(agent.Run(context.Background(), "Now a limerick")); err != nil {
		fmt.Println(err)
	}

	sessions, err := panto.ListSessions(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	// Newest first; sessions written within the same tick of the file clock come in either
	// order, so sort them here for a stable output.
	slices.SortFunc(sessions, func(a, b panto.SessionSummary) int { return strings.Compare(a.ID, b.ID) })
	for _, s := range sessions {
		parent := "none"
		if s.Parent != nil {
			parent = fmt.Sprintf("%s at %d", s.Parent.ID, s.Parent.MessageCount)
		}
		fmt.Printf("%s: %d messages, %q, parent %s\n", s.ID, s.MessageCount, s.FirstUserText, parent)
	}
	// Output:
	// limerick: 4 messages, "Write a haiku", parent poems at 2
	// poems: 4 messages, "Write a haiku", parent none
}
