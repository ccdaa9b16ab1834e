// Package hubapi defines the request and response bodies of hubctl's HTTP API
// (docs/api.md); the server, the CLI and pkg/client share them. It also
// defines ControlPlane, the hub's operations as every front end calls
// them, with their parameters, the Caller they act for and the typed
// errors they fail with: pkg/client implements it over HTTP, and the hub
// in process.
//
// The types carry the JSON tags of the API contract and nothing else: no
// I/O, no validation beyond the form of a tenant id, no dependency on
// hubctl's internals, so that a program outside this module can decode
// what the hub answers and encode what it accepts with exactly the shapes
// the server uses.
package hubapi
