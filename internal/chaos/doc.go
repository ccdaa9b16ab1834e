// Package chaos holds the suite that drives the real hubctl binary the way
// production fails, under load, and checks what the hub promises
// (docs/reliability.md): every valid event in the inbox exactly once, every
// matched push event delivered at least once, every pull event read exactly
// once in order, nothing left in flight, recovery within the bound, and,
// for a subscription ordered by subject, each subject's first deliveries in
// seq order with keys held by a killed process not holding the others.
//
// The suite lives in the package's tests. `go test ./internal/chaos` (and so
// `make test`) runs the short version: CHAOS_ROUNDS defaults to 3 SIGKILL
// rounds and the scenarios run side by side. `make chaos` runs the long
// version (CHAOS_ROUNDS=20), one scenario after another, and prints each
// scenario's report.
package chaos
