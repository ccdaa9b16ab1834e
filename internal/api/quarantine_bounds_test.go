package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestQuarantineListsStayBounded: after 30 records of 5 MB each (stored
// whole, as rows written before values were bounded are), a listing of
// 1000 answers a few kilobytes per record and the hub allocates a small
// fraction of what the records hold; the one record read whole carries its
// value.
func TestQuarantineListsStayBounded(t *testing.T) {
	const records, size = 30, 5 << 20
	h := newHarness(t, testAdminToken)
	_, err := h.store.Pool.Exec(context.Background(), `
		INSERT INTO quarantine (reason, detail, topic, kafka_partition, kafka_offset, record_key, header_keys, header_values,
		                        value, value_size, value_sha256)
		SELECT 'payload_too_large', 'big', 'lerian.streaming.a_b.c', 0, g, v, ARRAY['ce-id'::bytea, 'x-big'::bytea], ARRAY[v, v], v, octet_length(v), sha256(v)
		FROM generate_series(1, $1) g, LATERAL (SELECT convert_to(repeat(md5(g::text), $2 / 32), 'UTF8') AS v) big`, records, size)
	if err != nil {
		t.Fatal(err)
	}

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rssBefore := rssBytes(t)
	body := h.getRaw(t, "/admin/quarantine?limit=1000")
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("GET /admin/quarantine?limit=1000 over %d records of %d MB: %d response bytes, %.1f MB allocated, RSS %.1f → %.1f MB",
		records, size>>20, len(body), float64(allocated)/(1<<20), float64(rssBefore)/(1<<20), float64(rssBytes(t))/(1<<20))

	var page struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(body, &page); err != nil || len(page.Items) != records {
		t.Fatalf("listing: %v, %d items", err, len(page.Items))
	}
	if len(body) > records*2048 {
		t.Errorf("the listing is %d bytes for %d records: not bounded", len(body), records)
	}
	if allocated > 64<<20 {
		t.Errorf("listing allocated %d MB for records holding %d MB", allocated>>20, records*size>>20)
	}
	item := page.Items[0]
	if item["value_size"] != float64(size) || item["key_size"] != float64(size) || item["header_count"] != float64(2) {
		t.Errorf("summary does not say how large the record is: %v", item)
	}

	whole := h.getRaw(t, fmt.Sprintf("/admin/quarantine/%v", item["id"]))
	if n := len(whole); n < size {
		t.Errorf("the record read whole is %d bytes, smaller than its %d-byte value", n, size)
	}
}

func (h *harness) getRaw(t *testing.T, path string) []byte {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, h.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d, %v", path, resp.StatusCode, err)
	}
	return body
}

// rssBytes is the process's resident set size, 0 where /proc is missing.
func rssBytes(t *testing.T) uint64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
