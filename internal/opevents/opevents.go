// Package opevents decides what the hub's operational events say and who
// receives them (SPEC §11; docs/operational-events.md): the event types,
// their data, the actor of a change, and routing with its one rule beyond
// matching. It does no I/O; internal/store/opevents writes the events.
package opevents

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	opstore "github.com/hubctl/hubctl/internal/store/opevents"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// The event keys (SPEC §11). Each is "hub." and the event's name; the ce
// type is the type prefix followed by the key.
const (
	SubscriptionCreated    = "hub.subscription_created"
	SubscriptionUpdated    = "hub.subscription_updated"
	SubscriptionDeleted    = "hub.subscription_deleted"
	SubscriptionDisabled   = "hub.subscription_disabled"
	SubscriptionEnabled    = "hub.subscription_enabled"
	SecretRotated          = "hub.secret_rotated"
	VerificationFailed     = "hub.verification_failed"
	SubscriptionFailing    = "hub.subscription_failing"
	SubscriptionRecovered  = "hub.subscription_recovered"
	DeliveriesDeadLettered = "hub.deliveries_dead_lettered"
)

// Keys lists every event key, in the order of SPEC §11.
var Keys = []string{
	SubscriptionCreated, SubscriptionUpdated, SubscriptionDeleted, SubscriptionDisabled, SubscriptionEnabled,
	SecretRotated, VerificationFailed, SubscriptionFailing, SubscriptionRecovered, DeliveriesDeadLettered,
}

// Triggers of hub.subscription_disabled.
const (
	TriggerManual    = "manual"
	TriggerAutomatic = "automatic"
)

// Actor is who made a change, as the event's data shows it.
type Actor struct {
	Kind    string `json:"kind"`
	ID      string `json:"id,omitempty"`      // an API key's id
	Session string `json:"session,omitempty"` // a portal session's id
}

// Hub is the actor of what the hub does by itself.
var Hub = Actor{Kind: "hub"}

// ActorOf is the actor a control-plane caller is: a portal session
// (a tenant's, or the operator console's, which is the admin with a
// session) is shown as its session, never as the admin or a key.
func ActorOf(c hubapi.Caller) Actor {
	switch {
	case c.Kind == hubapi.CallerPortal || (c.Kind == hubapi.CallerAdmin && c.Session != ""):
		return Actor{Kind: "portal", Session: c.Session}
	case c.Kind == hubapi.CallerTenantKey:
		return Actor{Kind: "api_key", ID: c.KeyID}
	}
	return Actor{Kind: "admin"}
}

// Subject is the subscription an event is about.
type Subject struct {
	ID       uuid.UUID
	TenantID string
	Name     string
}

// Builder makes events of one hub: the type prefix is its
// STREAMING_HUB_TYPE_PREFIX.
type Builder struct {
	TypePrefix string
	// Relay marks every event for the operational topic
	// (STREAMING_HUB_OPERATIONAL_TOPIC is set).
	Relay bool
}

// New is one event of key about sub, made by actor at `at`, its data the
// fields every event carries and fields (whose names must not be those).
func (b Builder) New(key string, sub Subject, actor Actor, at time.Time, fields map[string]any) (opstore.Event, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return opstore.Event{}, fmt.Errorf("new event id: %w", err)
	}
	data := make(map[string]any, len(fields)+4)
	for k, v := range fields {
		data[k] = v
	}
	data["subscription_id"], data["subscription_name"] = sub.ID.String(), sub.Name
	data["occurred_at"], data["actor"] = at.UTC().Format(time.RFC3339Nano), actor
	payload, err := json.Marshal(data)
	if err != nil {
		return opstore.Event{}, fmt.Errorf("%s data: %w", key, err)
	}
	return opstore.Event{ID: id, TenantID: sub.TenantID, Key: key, Type: b.TypePrefix + key, About: sub.ID, Time: at, Data: payload, Relay: b.Relay}, nil
}
