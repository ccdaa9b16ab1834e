package catalog_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/testutil/storetest"
)

// quarantineRow is what a test stores; insertQuarantined writes it as ingest
// would and returns the id it got.
type quarantineRow struct {
	reason, topic string
	partition     int32
	offset        int64
	key           []byte
	headers       []catalog.RawHeader
	value         []byte
	receivedAt    time.Time
}

func insertQuarantined(t *testing.T, st *storetest.Store, r quarantineRow) int64 {
	t.Helper()
	keys := make([][]byte, len(r.headers))
	values := make([][]byte, len(r.headers))
	for i, h := range r.headers {
		keys[i], values[i] = h.Key, h.Value
	}
	value := r.value
	if value == nil {
		value = []byte{} // the column is NOT NULL; nil would be sent as NULL
	}
	var id int64
	err := st.Pool.QueryRow(context.Background(), `
		INSERT INTO quarantine (reason, detail, topic, kafka_partition, kafka_offset,
		                        record_key, header_keys, header_values, value, received_at, value_size, value_sha256)
		VALUES ($1, 'detail of '||$1, $2, $3, $4, $5, $6, $7, $8::bytea, $9, octet_length($8::bytea), sha256($8::bytea))
		RETURNING id`,
		r.reason, r.topic, r.partition, r.offset, r.key, keys, values, value, r.receivedAt).Scan(&id)
	if err != nil {
		t.Fatalf("insert quarantined record: %v", err)
	}
	return id
}

func TestGetQuarantinedKeepsRawBytes(t *testing.T) {
	st := storetest.Open(t)
	headers := []catalog.RawHeader{
		{Key: []byte("ce-id"), Value: []byte("not-a-uuid")},
		{Key: []byte("ce-tenantid"), Value: []byte{0xff, 0x00, 0xfe}},
		{Key: []byte{0xc3, 0x28}, Value: []byte{}},
	}
	withKey := insertQuarantined(t, st, quarantineRow{
		reason: "invalid_id", topic: "lerian.streaming.x", partition: 3, offset: 42,
		key: []byte{0x00, 0x01, 0x80}, headers: headers, value: []byte{0xde, 0xad, 0xbe, 0xef},
		receivedAt: t0,
	})
	withoutKey := insertQuarantined(t, st, quarantineRow{
		reason: "missing_id", topic: "lerian.streaming.x", partition: 3, offset: 43,
		headers: nil, value: []byte{}, receivedAt: t0.Add(time.Second),
	})

	noKey, _, err := st.GetQuarantined(context.Background(), withoutKey)
	if err != nil {
		t.Fatal(err)
	}
	if noKey.Key != nil || len(noKey.Headers) != 0 || noKey.Value == nil || len(noKey.Value) != 0 {
		t.Errorf("record without key: key %v, headers %v, value %v; want nil key, no headers, empty value", noKey.Key, noKey.Headers, noKey.Value)
	}
	keyed, info, err := st.GetQuarantined(context.Background(), withKey)
	if err != nil {
		t.Fatal(err)
	}
	want := catalog.QuarantinedRecord{
		QuarantineOrigin: catalog.QuarantineOrigin{ID: withKey, Reason: "invalid_id", Detail: "detail of invalid_id", Topic: "lerian.streaming.x",
			Partition: 3, Offset: 42},
		Key: []byte{0x00, 0x01, 0x80}, Headers: headers,
		Value: []byte{0xde, 0xad, 0xbe, 0xef}, ReceivedAt: t0,
	}
	if diff := diffRecords(keyed, want); diff != "" {
		t.Errorf("record with binary key and headers: %s", diff)
	}
	sum := sha256.Sum256(want.Value)
	if info.Size != 4 || !bytes.Equal(info.SHA256, sum[:]) || info.Truncated {
		t.Errorf("value info %+v, want 4 bytes, its SHA-256, whole", info)
	}
	if _, _, err := st.GetQuarantined(context.Background(), withKey+100); !errors.Is(err, pg.ErrNotFound) {
		t.Errorf("missing id: err = %v, want ErrNotFound", err)
	}
}

// TestListQuarantineIsBounded: whatever a record holds, a listing carries
// at most a fixed number of bytes of it, and says how much there was.
func TestListQuarantineIsBounded(t *testing.T) {
	st := storetest.Open(t)
	big := bytes.Repeat([]byte("x"), 1<<20)
	var headers []catalog.RawHeader
	for i := range 40 {
		headers = append(headers, catalog.RawHeader{Key: []byte(fmt.Sprintf("ce-ext%d-%s", i, big[:200])), Value: big[:10_000]})
	}
	insertQuarantined(t, st, quarantineRow{reason: "headers_too_large", topic: "t", key: big, headers: headers, value: big, receivedAt: t0})
	insertQuarantined(t, st, quarantineRow{reason: "missing_id", topic: "t", offset: 1, key: []byte("k"),
		headers: []catalog.RawHeader{{Key: []byte("ce-id"), Value: []byte("x")}}, value: []byte("small"), receivedAt: t0.Add(-time.Second)})

	records, _, err := st.ListQuarantine(context.Background(), catalog.QuarantineQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 2 {
		t.Fatalf("%d records, want 2", len(records))
	}
	r := records[0]
	if len(r.KeyPrefix) != catalog.SummaryFieldBytes || r.KeySize != 1<<20 || r.HeaderCount != 40 || len(r.Headers) != catalog.SummaryHeaders ||
		len(r.ValuePrefix) != catalog.SummaryValueBytes || r.Value.Size != 1<<20 || r.Value.Truncated {
		t.Errorf("summary of a large record: key %d of %d, %d of %d headers, value %d of %d",
			len(r.KeyPrefix), r.KeySize, len(r.Headers), r.HeaderCount, len(r.ValuePrefix), r.Value.Size)
	}
	for i, h := range r.Headers {
		if len(h.Key) != catalog.SummaryFieldBytes || len(h.Value) != catalog.SummaryFieldBytes ||
			r.HeaderKeySizes[i] != int64(len(headers[i].Key)) || r.HeaderValueSizes[i] != 10_000 {
			t.Errorf("header %d: name %d of %d bytes, value %d of %d", i, len(h.Key), r.HeaderKeySizes[i], len(h.Value), r.HeaderValueSizes[i])
		}
	}
	sum := sha256.Sum256(big)
	if !bytes.Equal(r.Value.SHA256, sum[:]) {
		t.Error("the summary's SHA-256 is not the value's")
	}
	small := records[1]
	if string(small.KeyPrefix) != "k" || small.KeySize != 1 || string(small.ValuePrefix) != "small" ||
		len(small.Headers) != 1 || string(small.Headers[0].Value) != "x" || small.HeaderValueSizes[0] != 1 {
		t.Errorf("summary of a small record: %+v", small)
	}
}

func TestListQuarantineNewestFirstAcrossPages(t *testing.T) {
	st := storetest.Open(t)
	// Two records share a received_at (ingest stamps a whole batch with its
	// transaction's time): the later id comes first.
	var want []int64
	for i, at := range []time.Time{t0, t0.Add(time.Second), t0.Add(time.Second), t0.Add(time.Minute), t0.Add(-time.Hour)} {
		id := insertQuarantined(t, st, quarantineRow{reason: "missing_id", topic: "t", offset: int64(i), receivedAt: at})
		want = append(want, id)
	}
	// Expected newest first: minute, second (two, later id first), t0, -hour.
	want = []int64{want[3], want[2], want[1], want[0], want[4]}

	var got []int64
	q := catalog.QuarantineQuery{Limit: 2}
	for pages := 0; ; pages++ {
		if pages > len(want) {
			t.Fatal("paging does not end")
		}
		records, more, err := st.ListQuarantine(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range records {
			got = append(got, r.ID)
		}
		if !more {
			break
		}
		last := records[len(records)-1]
		q.After = &catalog.QuarantinePosition{ReceivedAt: last.ReceivedAt, ID: last.ID}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ids = %v, want %v", got, want)
	}
}

func TestListQuarantineFilters(t *testing.T) {
	st := storetest.Open(t)
	rows := []quarantineRow{
		{reason: "missing_id", topic: "a", offset: 1},
		{reason: "invalid_time", topic: "a", offset: 2},
		{reason: "missing_id", topic: "b", offset: 3},
		{reason: "missing_id", topic: "a", offset: 4},
	}
	for i, r := range rows {
		r.receivedAt = t0.Add(time.Duration(i) * time.Second)
		insertQuarantined(t, st, r)
	}
	cases := []struct {
		name          string
		reason, topic string
		wantOffsets   string
	}{
		{"no filter", "", "", "[4 3 2 1]"},
		{"reason", "missing_id", "", "[4 3 1]"},
		{"topic", "", "a", "[4 2 1]"},
		{"reason and topic", "missing_id", "a", "[4 1]"},
		{"nothing matches", "payload_too_large", "", "[]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			records, more, err := st.ListQuarantine(context.Background(), catalog.QuarantineQuery{Limit: 10, Reason: c.reason, Topic: c.topic})
			if err != nil {
				t.Fatal(err)
			}
			offsets := make([]int64, len(records))
			for i, r := range records {
				offsets[i] = r.Offset
			}
			if fmt.Sprint(offsets) != c.wantOffsets || more {
				t.Errorf("offsets %v (more = %v), want %s", offsets, more, c.wantOffsets)
			}
		})
	}
}

func TestListQuarantineRejectsBadLimit(t *testing.T) {
	if _, _, err := storetest.Open(t).ListQuarantine(context.Background(), catalog.QuarantineQuery{}); err == nil {
		t.Error("limit 0 accepted")
	}
}

func diffRecords(got, want catalog.QuarantinedRecord) string {
	switch {
	case got.ID != want.ID || got.Reason != want.Reason || got.Detail != want.Detail || got.Topic != want.Topic ||
		got.Partition != want.Partition || got.Offset != want.Offset || !got.ReceivedAt.Equal(want.ReceivedAt):
		return fmt.Sprintf("got %+v, want %+v", got, want)
	case !bytes.Equal(got.Key, want.Key) || !bytes.Equal(got.Value, want.Value):
		return fmt.Sprintf("key/value %x/%x, want %x/%x", got.Key, got.Value, want.Key, want.Value)
	case len(got.Headers) != len(want.Headers):
		return fmt.Sprintf("%d headers, want %d", len(got.Headers), len(want.Headers))
	}
	for i := range got.Headers {
		g, w := got.Headers[i], want.Headers[i]
		if !bytes.Equal(g.Key, w.Key) || !bytes.Equal(g.Value, w.Value) {
			return fmt.Sprintf("header %d = %x:%x, want %x:%x", i, g.Key, g.Value, w.Key, w.Value)
		}
	}
	return ""
}
