// Package traces embeds the request traces shipped with the repository (see
// README.md beside it for their origin and licence), so routebench replays
// them from any working directory.
package traces

import _ "embed"

// MooncakeSyntheticName is the embedded Mooncake trace's file name.
const MooncakeSyntheticName = "mooncake_synthetic_trace.jsonl"

// MooncakeSynthetic is kvcache-ai/Mooncake's FAST'25 synthetic trace (Apache-2.0), JSON lines.
//
//go:embed mooncake_synthetic_trace.jsonl
var MooncakeSynthetic []byte

// MooncakeConversationName is the embedded conversation trace's file name.
const MooncakeConversationName = "mooncake_conversation_trace.jsonl.gz"

// MooncakeConversation is kvcache-ai/Mooncake's FAST'25 conversation trace
// (Apache-2.0): an hour of a production chat service's requests, gzipped
// JSON lines (workload.ParseMooncake reads it as it is).
//
//go:embed mooncake_conversation_trace.jsonl.gz
var MooncakeConversation []byte
