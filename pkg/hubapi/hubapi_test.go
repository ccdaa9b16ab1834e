package hubapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
)

func TestEmptyPageJSON(t *testing.T) {
	got, err := json.Marshal(Page[Tenant]{Items: []Tenant{}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"items":[],"next_cursor":null}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestSubscriptionUpdateDecodesAbsentNullAndValue(t *testing.T) {
	cases := []struct {
		body                 string
		originSet, originNil bool
		origin               string
		scheduleSet          bool
	}{
		{`{}`, false, false, "", false},
		{`{"origin": null}`, true, true, "", false},
		{`{"origin": "midaz", "retry_schedule": ["1s"]}`, true, false, "midaz", true},
	}
	for _, tc := range cases {
		var in SubscriptionUpdate
		if err := json.Unmarshal([]byte(tc.body), &in); err != nil {
			t.Fatalf("%s: %v", tc.body, err)
		}
		if in.Origin.Set != tc.originSet || in.Origin.Null != tc.originNil || in.Origin.Value != tc.origin || in.RetrySchedule.Set != tc.scheduleSet {
			t.Errorf("%s decoded to origin %+v, schedule %+v", tc.body, in.Origin, in.RetrySchedule)
		}
		// What a client sends must decode to the same patch.
		encoded, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		var again SubscriptionUpdate
		if err := json.Unmarshal(encoded, &again); err != nil || again.Origin != in.Origin || again.RetrySchedule.Set != in.RetrySchedule.Set {
			t.Errorf("%s re-encoded as %s, which decodes differently", tc.body, encoded)
		}
	}
}

func TestSubscriptionUpdateEncodesOnlyWhatItSets(t *testing.T) {
	name := "renamed"
	cases := []struct {
		name string
		in   SubscriptionUpdate
		want string
	}{
		{"nothing", SubscriptionUpdate{}, `{}`},
		{"clear origin", SubscriptionUpdate{Origin: SetNull[string]()}, `{"origin":null}`},
		{"set origin and schedule", SubscriptionUpdate{Origin: SetTo("midaz"), RetrySchedule: SetTo([]string{"5s", "5m"})},
			`{"origin":"midaz","retry_schedule":["5s","5m"]}`},
		{"empty schedule is a value, not a clear", SubscriptionUpdate{RetrySchedule: SetTo([]string{})}, `{"retry_schedule":[]}`},
		{"name", SubscriptionUpdate{Name: &name}, `{"name":"renamed"}`},
	}
	for _, c := range cases {
		got, err := json.Marshal(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if string(got) != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}

func TestTenantUpdateTellsAbsentStatusApart(t *testing.T) {
	cases := map[string]*string{`{}`: nil, `{"status":"inactive"}`: ptr("inactive")}
	for body, want := range cases {
		var got TenantUpdate
		if err := json.Unmarshal([]byte(body), &got); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if (got.Status == nil) != (want == nil) || got.Status != nil && *got.Status != *want {
			t.Errorf("%s: status %v, want %v", body, got.Status, want)
		}
	}
}

func TestErrorJSON(t *testing.T) {
	cases := []struct {
		name string
		in   Error
		want string
	}{
		{"without details", Error{Code: "tenant_not_found", Message: "no"}, `{"code":"tenant_not_found","message":"no"}`},
		{"with details", Error{Code: "invalid_request", Message: "bad", Details: map[string]any{"field": "name"}},
			`{"code":"invalid_request","message":"bad","details":{"field":"name"}}`},
	}
	for _, c := range cases {
		got, err := json.Marshal(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if string(got) != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}

func TestErrorIsAnError(t *testing.T) {
	cases := []struct {
		in   Error
		want string
	}{
		{Error{Code: "store_unavailable", Message: "retry later"}, "store_unavailable: retry later"},
		{Error{Code: "internal"}, "internal"},
		{Error{Message: "no code"}, "no code"},
	}
	for _, c := range cases {
		if got := c.in.Error(); got != c.want {
			t.Errorf("%+v.Error() = %q, want %q", c.in, got, c.want)
		}
	}
	// A client wraps the body; callers match on the code.
	var apiErr *Error
	wrapped := fmt.Errorf("create tenant: %w", &Error{Code: "tenant_already_exists", Message: "dup"})
	if !errors.As(wrapped, &apiErr) || apiErr.Code != "tenant_already_exists" {
		t.Errorf("errors.As found %+v", apiErr)
	}
}

func ptr[T any](v T) *T { return &v }

// TestCreatedSubscriptionIsFlat: the create answer is the subscription's
// own object with signing_secret beside its fields, and decodes back whole.
func TestCreatedSubscriptionIsFlat(t *testing.T) {
	in := CreatedSubscription{Subscription: Subscription{ID: "0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b", Name: "orders"}, SigningSecret: "whsec_x"}
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	if fields["id"] != in.ID || fields["name"] != "orders" || fields["signing_secret"] != "whsec_x" {
		t.Errorf("encoded as %s", raw)
	}
	var back CreatedSubscription
	if err := json.Unmarshal(raw, &back); err != nil || back.ID != in.ID || back.SigningSecret != in.SigningSecret {
		t.Errorf("decoded %s as %+v (%v)", raw, back, err)
	}

	// A pull subscription has no secret, and no signing_secret field at all.
	raw, err = json.Marshal(CreatedSubscription{Subscription: Subscription{ID: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	var pullFields map[string]any
	if err := json.Unmarshal(raw, &pullFields); err != nil {
		t.Fatal(err)
	}
	if _, present := pullFields["signing_secret"]; present {
		t.Errorf("a subscription without a secret encodes signing_secret: %s", raw)
	}
}

// TestCreatedSubscriptionShowsTheSecretNotTheMask: the created answer's
// secret takes the place of the view's mask, once.
func TestCreatedSubscriptionShowsTheSecretNotTheMask(t *testing.T) {
	view := Subscription{ID: "s1", SigningSecret: Masked}
	cases := []struct {
		name string
		v    any
		want string // the signing_secret field as encoded, "" for none
	}{
		{"read", view, `"signing_secret":"****"`},
		{"created webhook", CreatedSubscription{Subscription: view, SigningSecret: "whsec_created"}, `"signing_secret":"whsec_created"`},
		{"created pull", CreatedSubscription{Subscription: Subscription{ID: "s2"}}, ""},
	}
	for _, tc := range cases {
		raw, err := json.Marshal(tc.v)
		if err != nil {
			t.Fatal(err)
		}
		count := bytes.Count(raw, []byte(`"signing_secret"`))
		if tc.want == "" && count != 0 || tc.want != "" && (count != 1 || !bytes.Contains(raw, []byte(tc.want))) {
			t.Errorf("%s encodes as %s, want signing_secret %q once", tc.name, raw, tc.want)
		}
	}
	var decoded CreatedSubscription
	if err := json.Unmarshal([]byte(`{"id":"s1","signing_secret":"whsec_created"}`), &decoded); err != nil || decoded.SigningSecret != "whsec_created" {
		t.Errorf("decoded %+v, %v: the secret belongs to the created answer", decoded, err)
	}
}
