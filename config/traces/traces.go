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
