package ingest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hubctl/hubctl/internal/event"
	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/internal/store/queue"
)

// TestOversizeRecordsAreQuarantinedBounded: records over the value, header
// and attribute limits are quarantined with their reason, and what is
// stored of each is bounded: a value's first bytes with the whole value's
// size and hash, the first headers that fit.
func TestOversizeRecordsAreQuarantinedBounded(t *testing.T) {
	e := newEnv(t)
	e.allowLargeRecords(testTopic)
	if _, err := service.NewTenants(e.store.Catalog, e.store.Lifecycle, time.Now).Create(context.Background(), "t-a"); err != nil {
		t.Fatal(err)
	}
	e.start()

	big := bytes.Repeat([]byte("v"), 3<<20)
	oversizeValue := cloudEvent(0, "t-a", eventID(1), big)
	manyHeaders := cloudEvent(0, "t-a", eventID(2), []byte("{}"))
	for i := range 10_000 {
		manyHeaders.Headers = append(manyHeaders.Headers, kgo.RecordHeader{Key: "ce-x" + strconv.Itoa(i), Value: []byte("1")})
	}
	longSource := cloudEvent(0, "t-a", eventID(3), []byte("{}"))
	setHeader(longSource, "ce-source", strings.Repeat("s", 1<<20))
	longSubject := cloudEvent(0, "t-a", eventID(4), []byte("{}"))
	longSubject.Headers = append(longSubject.Headers, kgo.RecordHeader{Key: "ce-subject", Value: bytes.Repeat([]byte("j"), 8<<10)})
	e.produce(oversizeValue, manyHeaders, longSource, longSubject)
	e.waitStored(testTopic, 4)

	type row struct {
		reason, detail string
		valueLen       int
		size           int64
		sum            []byte
		truncated      bool
		headers        int
		headerBytes    int64
	}
	read := func(offset int) row {
		var r row
		err := e.store.Pool.QueryRow(context.Background(), `
			SELECT reason, detail, octet_length(value), value_size, value_sha256, value_truncated, cardinality(header_keys),
			       (SELECT coalesce(sum(octet_length(k)), 0) FROM unnest(header_keys) k) + (SELECT coalesce(sum(octet_length(v)), 0) FROM unnest(header_values) v)
			FROM quarantine WHERE topic = $1 AND kafka_offset = $2`, testTopic, offset).
			Scan(&r.reason, &r.detail, &r.valueLen, &r.size, &r.sum, &r.truncated, &r.headers, &r.headerBytes)
		if err != nil {
			t.Fatalf("quarantine row at offset %d: %v", offset, err)
		}
		return r
	}
	sum := sha256.Sum256(big)
	if r := read(0); r.reason != "payload_too_large" || r.valueLen != quarantinePrefixBytes || r.size != 3<<20 || !bytes.Equal(r.sum, sum[:]) || !r.truncated {
		t.Errorf("oversize value stored as %s, %d bytes of %d (truncated %v, hash matches %v)", r.reason, r.valueLen, r.size, r.truncated, bytes.Equal(r.sum, sum[:]))
	}
	if r := read(1); r.reason != "headers_too_large" || r.headers != event.DefaultMaxHeaderCount || !strings.Contains(r.detail, "the first 64 of 10009 headers are kept") {
		t.Errorf("10,000 headers stored as %s with %d headers: %s", r.reason, r.headers, r.detail)
	}
	if r := read(2); r.reason != "headers_too_large" || r.headerBytes > event.DefaultMaxHeaderBytes {
		t.Errorf("1 MiB source stored as %s with %d header bytes: %s", r.reason, r.headerBytes, r.detail)
	}
	if r := read(3); r.reason != "attribute_too_large" || r.headers != 10 || r.size != 2 || r.truncated {
		t.Errorf("8 KiB subject stored as %s with %d headers, value %d bytes: %s", r.reason, r.headers, r.size, r.detail)
	}
	if n := e.count(`SELECT count(*) FROM events`); n != 0 {
		t.Errorf("%d oversize events reached the inbox", n)
	}
}

func setHeader(r *kgo.Record, key, value string) {
	for i := range r.Headers {
		if r.Headers[i].Key == key {
			r.Headers[i].Value = []byte(value)
		}
	}
}

func TestBoundForQuarantine(t *testing.T) {
	h := func(k string, n int) event.Header { return event.Header{Key: k, Value: bytes.Repeat([]byte("v"), n)} }
	opts := event.Options{MaxEventBytes: 100, MaxHeaderCount: 3, MaxHeaderBytes: 20}
	tests := []struct {
		name        string
		headers     []event.Header
		value, key  int
		wantHeaders []int // value lengths kept
		wantValue   int
		truncated   bool
		wantDetail  string
	}{
		{name: "within every limit", headers: []event.Header{h("a", 5), h("b", 5)}, value: 100, key: 10,
			wantHeaders: []int{5, 5}, wantValue: 100},
		{name: "a value over the limit keeps a prefix", value: quarantinePrefixBytes + 1,
			wantValue: quarantinePrefixBytes, truncated: true},
		{name: "a value over the limit but under the prefix stays whole", value: 1000, wantValue: 1000},
		{name: "too many headers", headers: []event.Header{h("a", 1), h("b", 1), h("c", 1), h("d", 1)},
			wantHeaders: []int{1, 1, 1}, wantDetail: "the first 3 of 4 headers"},
		{name: "too many header bytes cuts the last kept", headers: []event.Header{h("a", 9), h("b", 20), h("c", 1)},
			wantHeaders: []int{9, 9}, wantDetail: "the first 2 of 3 headers"},
		{name: "a first header larger than everything", headers: []event.Header{h("a", 1000)},
			wantHeaders: []int{19}, wantDetail: "the first 1 of 1 headers"},
		{name: "a key over the prefix", key: quarantinePrefixBytes + 5, wantDetail: "of the key's 65541 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := queue.IngestRecord{Headers: tt.headers, Value: bytes.Repeat([]byte("x"), tt.value),
				Key: bytes.Repeat([]byte("k"), tt.key), Verdict: event.Verdict{Kind: event.Quarantine, Detail: "d"}}
			boundForQuarantine(&rec, opts)
			var got []int
			for _, kept := range rec.Headers {
				got = append(got, len(kept.Value))
			}
			if !slices.Equal(got, tt.wantHeaders) {
				t.Errorf("headers kept %v, want %v", got, tt.wantHeaders)
			}
			if len(rec.Value) != tt.wantValue || rec.Original.Truncated != tt.truncated {
				t.Errorf("value kept %d bytes (truncated %v), want %d (%v)", len(rec.Value), rec.Original.Truncated, tt.wantValue, tt.truncated)
			}
			if tt.truncated && rec.Original.Size != int64(tt.value) {
				t.Errorf("original size %d, want %d", rec.Original.Size, tt.value)
			}
			if len(rec.Key) > quarantinePrefixBytes {
				t.Errorf("key kept %d bytes", len(rec.Key))
			}
			if tt.wantDetail != "" && !strings.Contains(rec.Verdict.Detail, tt.wantDetail) || tt.wantDetail == "" && rec.Verdict.Detail != "d" {
				t.Errorf("detail %q, want it to say %q", rec.Verdict.Detail, tt.wantDetail)
			}
		})
	}
}
