// Package service holds hubctl's use cases: the in-process implementation
// of hubapi.ControlPlane, which the HTTP API and the CLI's direct mode both
// program against, so both validate input the same way, fail with the same
// codes and print the same JSON. ControlPlane assembles them unchecked;
// ControlPlane.As is what front ends get, the use cases as one caller may
// use them, the caller's tenant checked inside every operation.
//
// Input is checked here, before any I/O. Failures the caller can act on come
// back as typed errors carrying the snake_case codes of docs/api.md:
// *hubapi.ValidationError (400, invalid_request, naming the field),
// *hubapi.ForbiddenError (403), *hubapi.NotFoundError (404),
// *hubapi.ConflictError (409) and *hubapi.UnprocessableError (422).
// NotFoundError and ConflictError wrap the
// store's ErrNotFound and ErrConflict, so errors.Is keeps working across the
// layers; anything else (ErrUnavailable above all) passes through as the store
// returned it.
//
// Use cases take and return the wire types of package hubapi, so the API
// answers, and the CLI prints for -o json and -o yaml, exactly the shapes
// pkg/client decodes.
package service
