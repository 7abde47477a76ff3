// Package envconfig builds the configuration every example reads from the environment
// (examples/README.md): PANTO_PROVIDER, PANTO_MODEL, PANTO_BASE_URL and PANTO_API_KEY.
// Shared by the examples so that each of them shows only what it is about.
package envconfig

import (
	"os"

	"panto.dev/panto"
)

// Config is the agent configuration of the examples; callers add what they need (tools, a
// system prompt) before panto.NewAgent.
func Config() panto.Config {
	provider := os.Getenv("PANTO_PROVIDER")
	if provider == "" {
		provider = "anthropic"
		if os.Getenv("ANTHROPIC_API_KEY") == "" && os.Getenv("OPENAI_API_KEY") != "" {
			provider = "openai"
		}
	}
	model := os.Getenv("PANTO_MODEL")
	if model == "" {
		model = map[string]string{"anthropic": "claude-sonnet-4-5", "openai": "gpt-4o-mini"}[provider]
	}
	return panto.Config{
		Provider:  provider,
		Model:     model,
		MaxTokens: 300,
		BaseURL:   os.Getenv("PANTO_BASE_URL"),
		APIKey:    os.Getenv("PANTO_API_KEY"),
	}
}
