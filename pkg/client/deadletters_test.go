package client

import (
	"context"
	"net/http"
	"testing"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestDeadLetterRequests(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name                string
		call                func(*Client) error
		method, path, query string
		body                string
	}{
		{"list with defaults", func(c *Client) error {
			_, err := c.ListDeadLetters(ctx, "", hubapi.DeadLetterListParams{})
			return err
		}, http.MethodGet, "/v1/dead-letters", "", ""},
		{"list with every filter", func(c *Client) error {
			_, err := c.ListDeadLetters(ctx, "", hubapi.DeadLetterListParams{ListParams: hubapi.ListParams{Limit: 5, Cursor: "c"},
				DeadLetterFilter: hubapi.DeadLetterFilter{SubscriptionID: "s1", Reason: "poison", Since: "2026-01-01T00:00:00Z", Until: "2026-02-01T00:00:00Z"}})
			return err
		}, http.MethodGet, "/v1/dead-letters",
			"cursor=c&limit=5&reason=poison&since=2026-01-01T00%3A00%3A00Z&subscription_id=s1&until=2026-02-01T00%3A00%3A00Z", ""},
		{"replay by ids", func(c *Client) error {
			_, err := c.ReplayDeadLetters(ctx, "", hubapi.DeadLetterReplay{IDs: []string{"d1", "d2"}})
			return err
		}, http.MethodPost, "/v1/dead-letters/replay", "", `{"ids":["d1","d2"]}`},
		{"dry run by filters", func(c *Client) error {
			_, err := c.ReplayDeadLetters(ctx, "", hubapi.DeadLetterReplay{Reason: "exhausted", DryRun: true})
			return err
		}, http.MethodPost, "/v1/dead-letters/replay", "", `{"reason":"exhausted","dry_run":true}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, last := fakeHub(t, http.StatusOK, `{}`, nil)
			c, err := New(srv.URL, WithToken("tok"))
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.call(c); err != nil {
				t.Fatalf("call: %v", err)
			}
			got := last()
			if got.method != tc.method || got.path != tc.path || got.query != tc.query || got.body != tc.body {
				t.Errorf("sent %s %s?%s %q, want %s %s?%s %q", got.method, got.path, got.query, got.body, tc.method, tc.path, tc.query, tc.body)
			}
		})
	}
}
