package store_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/store"
)

// quarantineRow is what a test stores; insertQuarantined writes it as ingest
// would and returns the id it got.
type quarantineRow struct {
	reason, topic string
	partition     int32
	offset        int64
	key           []byte
	headers       []store.RawHeader
	value         []byte
	receivedAt    time.Time
}

func insertQuarantined(t *testing.T, st *store.Store, r quarantineRow) int64 {
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
		                        record_key, header_keys, header_values, value, received_at)
		VALUES ($1, 'detail of '||$1, $2, $3, $4, $5, $6, $7, $8, $9)
		RETURNING id`,
		r.reason, r.topic, r.partition, r.offset, r.key, keys, values, value, r.receivedAt).Scan(&id)
	if err != nil {
		t.Fatalf("insert quarantined record: %v", err)
	}
	return id
}

func TestListQuarantineKeepsRawBytes(t *testing.T) {
	st := openStore(t)
	headers := []store.RawHeader{
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

	records, more, err := st.ListQuarantine(context.Background(), store.QuarantineQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if more || len(records) != 2 {
		t.Fatalf("got %d records (more = %v), want 2", len(records), more)
	}
	noKey, keyed := records[0], records[1]
	if noKey.ID != withoutKey || keyed.ID != withKey {
		t.Fatalf("order: ids %d, %d; want %d, %d", noKey.ID, keyed.ID, withoutKey, withKey)
	}
	if noKey.Key != nil || len(noKey.Headers) != 0 || noKey.Value == nil || len(noKey.Value) != 0 {
		t.Errorf("record without key: key %v, headers %v, value %v; want nil key, no headers, empty value", noKey.Key, noKey.Headers, noKey.Value)
	}
	want := store.QuarantinedRecord{
		ID: withKey, Reason: "invalid_id", Detail: "detail of invalid_id", Topic: "lerian.streaming.x",
		Partition: 3, Offset: 42, Key: []byte{0x00, 0x01, 0x80}, Headers: headers,
		Value: []byte{0xde, 0xad, 0xbe, 0xef}, ReceivedAt: t0,
	}
	if diff := diffRecords(keyed, want); diff != "" {
		t.Errorf("record with binary key and headers: %s", diff)
	}
}

func TestListQuarantineNewestFirstAcrossPages(t *testing.T) {
	st := openStore(t)
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
	q := store.QuarantineQuery{Limit: 2}
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
		q.After = &store.QuarantinePosition{ReceivedAt: last.ReceivedAt, ID: last.ID}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ids = %v, want %v", got, want)
	}
}

func TestListQuarantineFilters(t *testing.T) {
	st := openStore(t)
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
			records, more, err := st.ListQuarantine(context.Background(), store.QuarantineQuery{Limit: 10, Reason: c.reason, Topic: c.topic})
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
	if _, _, err := openStore(t).ListQuarantine(context.Background(), store.QuarantineQuery{}); err == nil {
		t.Error("limit 0 accepted")
	}
}

func diffRecords(got, want store.QuarantinedRecord) string {
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
