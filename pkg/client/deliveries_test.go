package client

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestDeliveryRequests(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name                 string
		call                 func(*Client) error
		path, rawPath, query string
	}{
		{"list with defaults", func(c *Client) error {
			_, err := c.ListDeliveries(ctx, "", "s1", hubapi.DeliveryListParams{})
			return err
		}, "/v1/subscriptions/s1/deliveries", "/v1/subscriptions/s1/deliveries", ""},
		{"list a page of one state", func(c *Client) error {
			_, err := c.ListDeliveries(ctx, "", "s1", hubapi.DeliveryListParams{ListParams: hubapi.ListParams{Limit: 5, Cursor: "c"}, State: "dead"})
			return err
		}, "/v1/subscriptions/s1/deliveries", "/v1/subscriptions/s1/deliveries", "cursor=c&limit=5&state=dead"},
		{"get", func(c *Client) error { _, err := c.GetDelivery(ctx, "", "d1"); return err },
			"/v1/deliveries/d1", "/v1/deliveries/d1", ""},
		{"get escapes the id", func(c *Client) error { _, err := c.GetDelivery(ctx, "", "a/b"); return err },
			"/v1/deliveries/a/b", "/v1/deliveries/a%2Fb", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, last := fakeHub(t, http.StatusOK, `{}`, nil)
			c, err := New(srv.URL, WithToken("tok"), WithTenant("acme"))
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.call(c); err != nil {
				t.Fatalf("call: %v", err)
			}
			got := last()
			if got.method != http.MethodGet || got.path != tc.path || got.rawPath != tc.rawPath || got.query != tc.query || got.body != "" {
				t.Errorf("sent %s %s (%s)?%s %q, want GET %s?%s", got.method, got.path, got.rawPath, got.query, got.body, tc.rawPath, tc.query)
			}
			if got.header.Get(HeaderTenantID) != "acme" {
				t.Errorf("X-Tenant-Id %q, want acme", got.header.Get(HeaderTenantID))
			}
		})
	}
}

func TestDeliveryIDsThatWouldAddressAnotherResourceAreRefused(t *testing.T) {
	srv, _ := fakeHub(t, http.StatusOK, `{}`, nil)
	c, err := New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"", ".", ".."} {
		if _, err := c.GetDelivery(context.Background(), "", id); err == nil {
			t.Errorf("GetDelivery(%q) sent a request", id)
		}
		if _, err := c.ListDeliveries(context.Background(), "", id, hubapi.DeliveryListParams{}); err == nil {
			t.Errorf("ListDeliveries(%q) sent a request", id)
		}
	}
}

func TestGetDeliveryDecodesTheDetail(t *testing.T) {
	body := `{"id":"d1","subscription_id":"s1","event_id":"e1","event_type":"transaction.posted","tenant_id":"acme",
		"state":"succeeded","attempts":2,"next_attempt_at":null,"dead_reason":null,"last_error":null,"last_status":200,
		"created_at":"2026-01-02T03:04:05Z","updated_at":"2026-01-02T03:04:07Z","succeeded_at":"2026-01-02T03:04:07Z","dead_at":null,
		"attempt_history":[
		 {"id":"a1","attempt":1,"started_at":"2026-01-02T03:04:05Z","duration_ms":120,"outcome":"failed","status_code":503,"error":"HTTP 503","response":"AAE=","response_encoding":"base64"},
		 {"id":"a2","attempt":2,"started_at":"2026-01-02T03:04:07Z","duration_ms":8,"outcome":"succeeded","status_code":200,"error":null,"response":null}]}`
	srv, _ := fakeHub(t, http.StatusOK, body, nil)
	c, err := New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.GetDelivery(context.Background(), "", "d1")
	if err != nil {
		t.Fatal(err)
	}
	if d.ID != "d1" || d.State != "succeeded" || d.LastStatus == nil || *d.LastStatus != 200 ||
		d.SucceededAt == nil || !d.SucceededAt.Equal(time.Date(2026, 1, 2, 3, 4, 7, 0, time.UTC)) {
		t.Errorf("delivery %+v", d.Delivery)
	}
	if len(d.AttemptHistory) != 2 {
		t.Fatalf("attempt history %+v", d.AttemptHistory)
	}
	first, second := d.AttemptHistory[0], d.AttemptHistory[1]
	if first.Attempt != 1 || first.DurationMS != 120 || first.Response == nil || *first.Response != "AAE=" || first.ResponseEncoding != "base64" {
		t.Errorf("first attempt %+v", first)
	}
	if second.Outcome != "succeeded" || second.Error != nil || second.Response != nil {
		t.Errorf("second attempt %+v", second)
	}
}
