// Package apierr is the one place where an internal failure becomes what a
// caller sees: an HTTP status, an error type and a message, serialised as the
// OpenAI-style body {"error":{"type":...,"message":...}}.
package apierr

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// Error types callers can branch on. Each maps to one HTTP status.
const (
	TypeInvalidRequest  = "invalid_request_error" // 400
	TypeNotFound        = "not_found_error"       // 404: unknown path or model
	TypeTooLarge        = "request_too_large"     // 413
	TypeUnavailable     = "service_unavailable"   // 503: no ready endpoint
	TypeOverloaded      = "AllEligibleWorkersOverloaded"
	TypeQueueFull       = "queue_full"    // 429
	TypeQueueTimeout    = "queue_timeout" // 429
	TypeShed            = "request_shed"  // 429: sheddable under pressure
	TypeInternal        = "internal_error"
	TypeNotImplemented  = "not_implemented"
	TypeUpstreamTimeout = "timeout"
)

// Error is a failure with the status and type the caller should see.
type Error struct {
	Status  int
	Type    string
	Message string
	Cause   error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s (%d): %s: %v", e.Type, e.Status, e.Message, e.Cause)
	}
	return fmt.Sprintf("%s (%d): %s", e.Type, e.Status, e.Message)
}

func (e *Error) Unwrap() error { return e.Cause }

// New builds an Error with a formatted message.
func New(status int, typ, format string, args ...any) *Error {
	return &Error{Status: status, Type: typ, Message: fmt.Sprintf(format, args...)}
}

// BadRequest is a 400 invalid_request_error.
func BadRequest(format string, args ...any) *Error {
	return New(http.StatusBadRequest, TypeInvalidRequest, format, args...)
}

// NotFound is a 404 not_found_error.
func NotFound(format string, args ...any) *Error {
	return New(http.StatusNotFound, TypeNotFound, format, args...)
}

// Unavailable is a 503 service_unavailable.
func Unavailable(format string, args ...any) *Error {
	return New(http.StatusServiceUnavailable, TypeUnavailable, format, args...)
}

// As returns the *Error in err's chain; any other error becomes a 500.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Status: http.StatusInternalServerError, Type: TypeInternal, Message: "internal error", Cause: err}
}

type body struct {
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
		Code    int    `json:"code"`
	} `json:"error"`
}

// Response returns the HTTP status and JSON body for err. Internal causes of a
// 500 are not leaked into the body.
func Response(err error) (int, []byte) {
	e := As(err)
	var b body
	b.Error.Type, b.Error.Message, b.Error.Code = e.Type, e.Message, e.Status
	out, _ := json.Marshal(b) // a struct of strings and an int cannot fail
	return e.Status, out
}
