// Package request parses OpenAI-compatible request bodies (completions, chat,
// responses, embeddings) once into a typed Request, and scans streamed (SSE)
// or buffered responses for the first token, the end and usage.
package request

// Kind is the API a request targets, derived from its path.
type Kind int

// The supported APIs.
const (
	KindUnknown Kind = iota
	KindCompletions
	KindChatCompletions
	KindResponses
	KindEmbeddings
	KindModels
)

// Request is what routing needs from a body. Raw aliases the caller's buffer:
// it is not copied.
type Request struct {
	Kind  Kind
	Model string
	// Prompt is the text the model will see, used for tokenizing and prefix
	// hashing: the completion prompt(s), or the text parts of chat messages /
	// responses input / embeddings input, each prefixed by its role. From
	// ParseInto it aliases the caller's scratch buffer (the lifetime is the
	// buffer's, hence bytes, not a string); from Parse it is the request's own.
	Prompt []byte
	// PromptTokenIDs holds token ids when the caller sent them instead of text
	// (completions prompt as an int array).
	PromptTokenIDs []uint32
	Stream         bool
	IncludeUsage   bool
	MaxTokens      int // max_tokens / max_completion_tokens / max_output_tokens; 0 = unset
	CacheSalt      string
	User           string
	Raw            []byte
	// ModelSpan is where the model's JSON string (quotes included) sits in Raw, so it can be rewritten in place.
	ModelSpan [2]int
}

// Usage is the token accounting an engine reports in a response.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	CachedTokens     int
}
