package main

import "github.com/kvpick/kvpick/pkg/request"

// parseBody parses an OpenAI body exactly as the picker does, so both sides
// derive the same prompt text (and therefore the same tokens). Errors are
// *apierr.Error 400s naming the cause.
var parseBody = request.Parse
