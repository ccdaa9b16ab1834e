package events

import "github.com/google/uuid"

// newEventID returns a fresh UUIDv7, the id rule of an event (docs/concepts.md, Events).
func newEventID() string { return uuid.Must(uuid.NewV7()).String() }
