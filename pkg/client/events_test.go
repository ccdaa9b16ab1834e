package client

import (
	"context"
	"net/http"
	"testing"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestEventRequests(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name                 string
		call                 func(*Client) error
		path, rawPath, query string
	}{
		{"list with defaults", func(c *Client) error { _, err := c.ListEvents(ctx, "", hubapi.EventListParams{}); return err },
			"/v1/inbox", "/v1/inbox", ""},
		{"list with every filter", func(c *Client) error {
			_, err := c.ListEvents(ctx, "", hubapi.EventListParams{ListParams: hubapi.ListParams{Limit: 5, Cursor: "c"},
				EventFilter: hubapi.EventFilter{Type: "a.b", Source: "midaz", Subject: "s 1", Since: "2026-01-01T00:00:00Z", Until: "2026-01-02T00:00:00Z"}})
			return err
		}, "/v1/inbox", "/v1/inbox",
			"cursor=c&limit=5&since=2026-01-01T00%3A00%3A00Z&source=midaz&subject=s+1&type=a.b&until=2026-01-02T00%3A00%3A00Z"},
		{"get", func(c *Client) error { _, err := c.GetEvent(ctx, "", "e1"); return err }, "/v1/inbox/e1", "/v1/inbox/e1", ""},
		{"get escapes the id", func(c *Client) error { _, err := c.GetEvent(ctx, "", "a/b"); return err },
			"/v1/inbox/a/b", "/v1/inbox/a%2Fb", ""},
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
			if got.method != http.MethodGet || got.path != tc.path || got.rawPath != tc.rawPath || got.query != tc.query {
				t.Errorf("sent %s %s (%s)?%s, want GET %s?%s", got.method, got.path, got.rawPath, got.query, tc.rawPath, tc.query)
			}
		})
	}
	srv, _ := fakeHub(t, http.StatusOK, `{}`, nil)
	c, _ := New(srv.URL)
	for _, id := range []string{"", ".", ".."} {
		if _, err := c.GetEvent(ctx, "", id); err == nil {
			t.Errorf("GetEvent(%q) sent a request", id)
		}
	}
}
