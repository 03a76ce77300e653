package testutil

// Ptr returns a pointer to v, for the optional (*T) fields of configs and
// options in table-driven tests.
func Ptr[T any](v T) *T { return &v }
