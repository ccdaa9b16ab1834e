package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// BenchmarkPull measures pull throughput through the whole API: one op is a
// GET /v1/events of a full page of 1000 events (about 200 bytes of JSON data
// each) over HTTP, authenticated, read, advanced and encoded. The
// subscription is pre-filled once; each op re-reads one of its pages with
// `after`, which takes the same lock and reads the same rows as a read from
// the cursor.
func BenchmarkPull(b *testing.B) {
	const pages, pageSize = 20, 1000
	h := newHarness(b, testAdminToken)
	_, key := h.tenantWithKey(b, "acme")
	sub := h.v1(b, http.StatusCreated, key, "POST", "/v1/subscriptions", pullBody).body["id"].(string)
	_, err := h.store.Pool.Exec(context.Background(), `
		WITH ev AS (
		    INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time,
		                        header_keys, header_values, payload, topic, kafka_partition, kafka_offset, datacontenttype)
		    SELECT 'acme', gen_random_uuid(), 'transaction.posted', '1.0.0', 1, 'midaz', 'studio.lerian.midaz.transaction.posted',
		           now(), '{}', '{}',
		           convert_to('{"transaction_id":"' || gen_random_uuid() || '","amount":' || g || ',"currency":"BRL","account":"acc-' || g ||
		                      '","description":"benchmark event with a realistic amount of data in it"}', 'UTF8'),
		           't', 0, g, 'application/json'
		    FROM generate_series(1, $2) g
		    RETURNING seq)
		INSERT INTO pull_entries (subscription_id, event_seq) SELECT $1, seq FROM ev`, sub, pages*pageSize)
	if err != nil {
		b.Fatalf("pre-fill: %v", err)
	}
	var first int64
	if err := h.store.Pool.QueryRow(context.Background(), `SELECT min(event_seq) FROM pull_entries WHERE subscription_id = $1`, sub).Scan(&first); err != nil {
		b.Fatal(err)
	}

	client := &http.Client{Timeout: time.Minute}
	read := func(after int64) int {
		req, err := http.NewRequest("GET", fmt.Sprintf("%s/v1/events?subscription_id=%s&limit=%d&after=%d", h.url, sub, pageSize, after), nil)
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			raw, _ := io.ReadAll(resp.Body)
			b.Fatalf("GET /v1/events: %d %s", resp.StatusCode, raw)
		}
		var page hubapi.PullPage
		if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
			b.Fatal(err)
		}
		return len(page.Items)
	}

	events := 0
	page := 0
	start := time.Now()
	for b.Loop() {
		events += read(first - 1 + int64(page%pages)*pageSize)
		page++
	}
	if events != page*pageSize {
		b.Fatalf("read %d events in %d pages of %d", events, page, pageSize)
	}
	b.ReportMetric(float64(events)/time.Since(start).Seconds(), "events/s")
}
