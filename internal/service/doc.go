// Package service holds hubctl's use cases: the operations the HTTP API and
// the CLI's direct mode share, so both validate input the same way, fail
// with the same codes and print the same JSON.
//
// Input is checked here, before any I/O. Failures the caller can act on come
// back as typed errors carrying the snake_case codes of docs/api.md:
// *ValidationError (400, invalid_request, naming the field), *NotFoundError
// (404) and *ConflictError (409). NotFoundError and ConflictError wrap the
// store's ErrNotFound and ErrConflict, so errors.Is keeps working across the
// layers; anything else (ErrUnavailable above all) passes through as the store
// returned it.
//
// Use cases take and return the wire types of package hubapi, so the API
// answers, and the CLI prints for -o json and -o yaml, exactly the shapes
// pkg/client decodes.
package service
