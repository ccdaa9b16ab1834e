package sink

import (
	"slices"
	"testing"
	"time"
)

func TestAttributesOfADelivery(t *testing.T) {
	full := Delivery{
		DeliveryID: "0190a3f2-0000-7000-8000-000000000001", EventID: "evt-1", EventKey: "order.created",
		TenantID: "acme", SchemaVersion: "1.2.0", TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		TraceState: "congo=t61rcWkgMzE",
	}
	for _, tc := range []struct {
		name string
		d    Delivery
		want []Attribute
	}{
		{"every value", full, []Attribute{
			{"lerian-event-id", "evt-1"},
			{"lerian-event-type", "order.created"},
			{"lerian-tenant-id", "acme"},
			{"lerian-delivery-id", "0190a3f2-0000-7000-8000-000000000001"},
			{"lerian-schema-version", "1.2.0"},
			{"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
			{"tracestate", "congo=t61rcWkgMzE"},
		}},
		{"no trace context", Delivery{DeliveryID: "d", EventID: "e", EventKey: "k", TenantID: "t", SchemaVersion: "1"}, []Attribute{
			{"lerian-event-id", "e"}, {"lerian-event-type", "k"}, {"lerian-tenant-id", "t"},
			{"lerian-delivery-id", "d"}, {"lerian-schema-version", "1"},
		}},
		{"an empty value is left out", Delivery{DeliveryID: "d", EventID: "e", EventKey: "k", TenantID: "t"}, []Attribute{
			{"lerian-event-id", "e"}, {"lerian-event-type", "k"}, {"lerian-tenant-id", "t"}, {"lerian-delivery-id", "d"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Attributes(tc.d); !slices.Equal(got, tc.want) {
				t.Errorf("Attributes = %v\nwant %v", got, tc.want)
			}
		})
	}
}

func TestCloudEventsAttributesOfADelivery(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 30, 0, 500_000_000, time.FixedZone("BRT", -3*3600))
	for _, tc := range []struct {
		name string
		d    Delivery
		want []Attribute
	}{
		{"every attribute, time in UTC", Delivery{
			EventID: "evt-1", Source: "//ledger", Type: "com.lerian.ledger.order.created", Time: at,
			Subject: "order-9", DataSchema: "https://schemas.example.com/order/1",
		}, []Attribute{
			{"specversion", "1.0"}, {"id", "evt-1"}, {"source", "//ledger"}, {"type", "com.lerian.ledger.order.created"},
			{"time", "2026-03-01T15:30:00.5Z"}, {"subject", "order-9"}, {"dataschema", "https://schemas.example.com/order/1"},
		}},
		{"optional attributes absent", Delivery{EventID: "evt-2", Source: "//ledger", Type: "t"}, []Attribute{
			{"specversion", "1.0"}, {"id", "evt-2"}, {"source", "//ledger"}, {"type", "t"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CloudEventsAttributes(tc.d); !slices.Equal(got, tc.want) {
				t.Errorf("CloudEventsAttributes = %v\nwant %v", got, tc.want)
			}
		})
	}
}

func TestContentTypeDefaultsToJSON(t *testing.T) {
	for _, tc := range []struct{ declared, want string }{
		{"", "application/json"},
		{"application/cloudevents+json", "application/cloudevents+json"},
		{"text/plain; charset=utf-8", "text/plain; charset=utf-8"},
	} {
		if got := (Delivery{DataContentType: tc.declared}).ContentType(); got != tc.want {
			t.Errorf("ContentType of %q = %q, want %q", tc.declared, got, tc.want)
		}
	}
}
