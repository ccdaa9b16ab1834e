package service

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/pg"
)

func TestQuarantineViewJSON(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.FixedZone("BRT", -3*3600))
	cases := []struct {
		name   string
		record catalog.QuarantinedRecord
		want   string
	}{
		{
			name: "text key and headers",
			record: catalog.QuarantinedRecord{
				QuarantineOrigin: catalog.QuarantineOrigin{ID: 7, Reason: "invalid_id", Detail: `id "x" is not a canonical UUIDv7`, Topic: "lerian.streaming.a_b.c",
					Partition: 2, Offset: 99},
				Key:        []byte("acme"),
				Headers:    []catalog.RawHeader{{Key: []byte("ce-id"), Value: []byte("x")}, {Key: []byte("ce-subject"), Value: []byte("ação ✓")}},
				Value:      []byte(`{"a":1}`),
				ReceivedAt: at,
			},
			want: `{"id":7,"reason":"invalid_id","detail":"id \"x\" is not a canonical UUIDv7","topic":"lerian.streaming.a_b.c",` +
				`"partition":2,"offset":99,"key":"acme",` +
				`"headers":[{"key":"ce-id","value":"x"},{"key":"ce-subject","value":"ação ✓"}],` +
				`"value_base64":"eyJhIjoxfQ==","value_size":7,"value_sha256":"abcd","value_truncated":false,"received_at":"2025-01-02T06:04:05Z"}`,
		},
		{
			name: "binary key, header value and header name",
			record: catalog.QuarantinedRecord{
				QuarantineOrigin: catalog.QuarantineOrigin{ID: 8, Reason: "invalid_tenantid", Topic: "t"}, Key: []byte{0xff, 0x00},
				Headers:    []catalog.RawHeader{{Key: []byte("ce-tenantid"), Value: []byte{0xc3, 0x28}}, {Key: []byte{0x80}, Value: []byte("v")}},
				Value:      []byte{0x00},
				ReceivedAt: at,
			},
			want: `{"id":8,"reason":"invalid_tenantid","detail":"","topic":"t","partition":0,"offset":0,` +
				`"key":"/wA=","encoding":"base64",` +
				`"headers":[{"key":"ce-tenantid","value":"wyg=","encoding":"base64"},{"key":"gA==","value":"v","key_encoding":"base64"}],` +
				`"value_base64":"AA==","value_size":7,"value_sha256":"abcd","value_truncated":false,"received_at":"2025-01-02T06:04:05Z"}`,
		},
		{
			name:   "no key, no headers, empty value",
			record: catalog.QuarantinedRecord{QuarantineOrigin: catalog.QuarantineOrigin{ID: 9, Reason: "missing_specversion", Topic: "t"}, Value: []byte{}, ReceivedAt: at},
			want: `{"id":9,"reason":"missing_specversion","detail":"","topic":"t","partition":0,"offset":0,` +
				`"key":null,"headers":[],"value_base64":"","value_size":7,"value_sha256":"abcd","value_truncated":false,"received_at":"2025-01-02T06:04:05Z"}`,
		},
		{
			name:   "empty key is not a missing key",
			record: catalog.QuarantinedRecord{QuarantineOrigin: catalog.QuarantineOrigin{ID: 10, Reason: "missing_id", Topic: "t"}, Key: []byte{}, Value: []byte{}, ReceivedAt: at},
			want: `{"id":10,"reason":"missing_id","detail":"","topic":"t","partition":0,"offset":0,` +
				`"key":"","headers":[],"value_base64":"","value_size":7,"value_sha256":"abcd","value_truncated":false,"received_at":"2025-01-02T06:04:05Z"}`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := json.Marshal(quarantineView(c.record, pg.ValueInfo{Size: 7, SHA256: []byte{0xab, 0xcd}}))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestTenantViewJSON(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 600000000, time.FixedZone("BRT", -3*3600))
	got, err := json.Marshal(tenantView(catalog.Tenant{ID: "acme", Status: catalog.TenantActive, CreatedAt: at, UpdatedAt: at}))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"acme","status":"active","created_at":"2025-01-02T06:04:05.6Z","updated_at":"2025-01-02T06:04:05.6Z"}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
