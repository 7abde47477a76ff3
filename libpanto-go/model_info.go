package panto

// ModelInfo says what the model catalog lacks of a model, or what differs from it
// (docs/models-and-cost.md): each field set is over the catalog's entry, or stands alone for
// a model the catalog does not know. Config.ModelInfo; zero fields are not sent.
type ModelInfo struct {
	MaxInputTokens  int64             `json:"max_input_tokens,omitempty"`
	MaxOutputTokens int64             `json:"max_output_tokens,omitempty"`
	Price           *ModelPrice       `json:"price,omitempty"`
	LongContext     *LongContextPrice `json:"long_context,omitempty"`
	Abilities       *ModelAbilities   `json:"abilities,omitempty"`
}

// ModelPrice is a model's list prices in USD per million tokens; nil: the catalog's.
type ModelPrice struct {
	Input        *float64 `json:"input,omitempty"`
	Output       *float64 `json:"output,omitempty"`
	CacheRead    *float64 `json:"cache_read,omitempty"`
	CacheWrite5m *float64 `json:"cache_write_5m,omitempty"`
	CacheWrite1h *float64 `json:"cache_write_1h,omitempty"`
	Reasoning    *float64 `json:"reasoning,omitempty"`
}

// LongContextPrice is the prices of a whole request once its prompt (cached tokens included)
// passes Above tokens; it replaces the catalog's tier as a whole.
type LongContextPrice struct {
	Above        int64    `json:"above"`
	Input        *float64 `json:"input,omitempty"`
	Output       *float64 `json:"output,omitempty"`
	CacheRead    *float64 `json:"cache_read,omitempty"`
	CacheWrite5m *float64 `json:"cache_write_5m,omitempty"`
	CacheWrite1h *float64 `json:"cache_write_1h,omitempty"`
}

// ModelAbilities is what a model takes; nil: the catalog's.
type ModelAbilities struct {
	Tools            *bool `json:"tools,omitempty"`
	Images           *bool `json:"images,omitempty"`
	PDFs             *bool `json:"pdfs,omitempty"`
	Thinking         *bool `json:"thinking,omitempty"`
	StructuredOutput *bool `json:"structured_output,omitempty"`
	Caching          *bool `json:"caching,omitempty"`
}
