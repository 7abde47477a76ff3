package panto_test

import (
	"context"
	"fmt"

	"panto.dev/panto"
)

// emulatorAgent is an agent of the emulator that TestMain starts, answering scenario.
func emulatorAgent(cfg panto.Config, responses ...map[string]any) (*panto.Agent, error) {
	if err := postScenario(scenario(responses...)); err != nil {
		return nil, err
	}
	cfg.Model, cfg.BaseURL, cfg.APIKey = "claude-sonnet-4-5", emulatorURL, "test-key"
	if cfg.Provider == "" {
		cfg.Provider = "anthropic"
	}
	return panto.NewAgent(cfg)
}

// The one-call form: a whole turn, its last message back.
func ExampleAgent_Complete() {
	agent, err := emulatorAgent(panto.Config{}, textAnswer("Two, three and five."))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer agent.Close()
	msg, err := agent.Complete(context.Background(), "Name three primes.")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(msg.Text(), msg.StopReason)
	// Output: Two, three and five. end_turn
}

// Only the text of a turn, as it arrives.
func ExampleStream_Text() {
	agent, err := emulatorAgent(panto.Config{}, textAnswer("Hello world"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer agent.Close()
	stream, err := agent.Run(context.Background(), "Say hello")
	if err != nil {
		fmt.Println(err)
		return
	}
	for text := range stream.Text() {
		fmt.Print(text)
	}
	fmt.Println()
	if err := stream.Err(); err != nil {
		fmt.Println(err)
	}
	// Output: Hello world
}

// Three tools the model asks for in one message run at once, each reporting progress; the
// results come in call order.
func ExampleReportProgress() {
	lookup := func(city string) panto.Tool {
		type in struct{}
		return panto.MustNewTool("weather_"+city, "The weather in "+city+".",
			func(ctx context.Context, _ in) (string, error) {
				panto.ReportProgress(ctx, "asking "+city, -1)
				return "sunny in " + city, nil
			})
	}
	agent, err := emulatorAgent(panto.Config{Tools: []panto.Tool{lookup("paris"), lookup("oslo"), lookup("lima")}},
		toolUse("", "call_1", "weather_paris", map[string]any{}, "call_2", "weather_oslo", map[string]any{},
			"call_3", "weather_lima", map[string]any{}),
		textAnswer("Sunny everywhere."))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer agent.Close()
	stream, err := agent.Run(context.Background(), "The weather in Paris, Oslo and Lima?")
	if err != nil {
		fmt.Println(err)
		return
	}
	progress := 0
	for ev := range stream.Iter {
		switch ev.Kind {
		case panto.EventToolProgress:
			progress++ // the three report in any order
		case panto.EventToolResult:
			fmt.Println(ev.Name, "->", ev.Text)
		}
	}
	fmt.Println(progress, "progress reports;", stream.Err())
	// Output:
	// weather_paris -> sunny in paris
	// weather_oslo -> sunny in oslo
	// weather_lima -> sunny in lima
	// 3 progress reports; <nil>
}

// Structured output: the answer decoded into a struct whose schema the model was given.
func ExampleParse() {
	type Capital struct {
		City    string `json:"city"`
		Country string `json:"country"`
	}
	agent, err := emulatorAgent(panto.Config{Provider: "openai"}, textAnswer(`{"city":"Lima","country":"Peru"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer agent.Close()
	c, err := panto.Parse[Capital](context.Background(), agent, "The capital of Peru?")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s, %s\n", c.City, c.Country)
	// Output: Lima, Peru
}
