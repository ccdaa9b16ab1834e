package s3

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/sink"
)

func TestParse(t *testing.T) {
	typ := NewType(Options{})
	keys := `"access_key_id":"` + testKeyID + `","secret_access_key":"` + testSecret + `"`
	tests := []struct {
		name        string
		object      string
		field       string // "" when Parse must accept it
		destination string
		public      string
	}{
		{"AWS", `{"bucket":"orders","region":"eu-west-1",` + keys + `}`, "", "s3://orders", `{"bucket":"orders","region":"eu-west-1"}`},
		{"compatible store", `{"bucket":"orders.archive","region":"us-east-1","prefix":"events/","endpoint":"https://Minio.example.com/","path_style":true,` + keys + `}`, "",
			"https://minio.example.com/orders.archive", `{"bucket":"orders.archive","region":"us-east-1","prefix":"events/","endpoint":"https://Minio.example.com/","path_style":true}`},
		{"path_style false", `{"bucket":"orders","region":"us-east-1","path_style":false,` + keys + `}`, "", "s3://orders", `{"bucket":"orders","region":"us-east-1"}`},

		{"no keys", `{"bucket":"orders","region":"us-east-1"}`, "sink.access_key_id", "", ""},
		{"no secret", `{"bucket":"orders","region":"us-east-1","access_key_id":"` + testKeyID + `"}`, "sink.secret_access_key", "", ""},
		{"secret with a newline", `{"bucket":"orders","region":"us-east-1","access_key_id":"` + testKeyID + `","secret_access_key":"` + testSecret + `\n"}`, "sink.secret_access_key", "", ""},
		{"no bucket", `{"region":"us-east-1",` + keys + `}`, "sink.bucket", "", ""},
		{"short bucket", `{"bucket":"ab","region":"us-east-1",` + keys + `}`, "sink.bucket", "", ""},
		{"uppercase bucket", `{"bucket":"Orders","region":"us-east-1",` + keys + `}`, "sink.bucket", "", ""},
		{"bucket with a slash", `{"bucket":"orders/x","region":"us-east-1",` + keys + `}`, "sink.bucket", "", ""},
		{"bucket like an IP", `{"bucket":"192.168.1.1","region":"us-east-1",` + keys + `}`, "sink.bucket", "", ""},
		{"bucket ending in a hyphen", `{"bucket":"orders-","region":"us-east-1",` + keys + `}`, "sink.bucket", "", ""},
		{"no region", `{"bucket":"orders",` + keys + `}`, "sink.region", "", ""},
		{"region not a label", `{"bucket":"orders","region":"evil.example.com/",` + keys + `}`, "sink.region", "", ""},
		{"private endpoint", `{"bucket":"orders","region":"us-east-1","endpoint":"http://10.0.0.1:9000",` + keys + `}`, "sink.endpoint", "", ""},
		{"endpoint with a path", `{"bucket":"orders","region":"us-east-1","endpoint":"https://s3.example.com/x?y=1",` + keys + `}`, "sink.endpoint", "", ""},
		{"prefix with a leading slash", `{"bucket":"orders","region":"us-east-1","prefix":"/events/",` + keys + `}`, "sink.prefix", "", ""},
		{"prefix with a control character", `{"bucket":"orders","region":"us-east-1","prefix":"a\tb",` + keys + `}`, "sink.prefix", "", ""},
		{"long prefix", `{"bucket":"orders","region":"us-east-1","prefix":"` + strings.Repeat("p", MaxPrefixBytes+1) + `",` + keys + `}`, "sink.prefix", "", ""},
		{"path_style a string", `{"bucket":"orders","region":"us-east-1","path_style":"yes",` + keys + `}`, "sink.path_style", "", ""},
		{"unknown field", `{"bucket":"orders","region":"us-east-1","acl":"public-read",` + keys + `}`, "sink.acl", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := typ.Parse(json.RawMessage(`{"type":"s3",` + tc.object[1:]))
			if tc.field != "" {
				var fe *sink.FieldError
				if !errors.As(err, &fe) || fe.Field != tc.field {
					t.Fatalf("Parse = %v, want a FieldError on %s", err, tc.field)
				}
				if strings.Contains(err.Error(), testSecret) || strings.Contains(err.Error(), testKeyID) {
					t.Fatalf("error %q quotes a credential", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if cfg.Destination != tc.destination || string(cfg.Public) != tc.public {
				t.Errorf("Destination %q, Public %s; want %q, %s", cfg.Destination, cfg.Public, tc.destination, tc.public)
			}
			if strings.Contains(string(cfg.Public), testSecret) || strings.Contains(string(cfg.Public), testKeyID) {
				t.Errorf("Public %s holds a credential", cfg.Public)
			}
			if _, err := typ.Open(cfg, nil); err != nil {
				t.Errorf("Open of what Parse gave: %v", err)
			}
		})
	}
}

// TestReadsMaskTheKeys: a read shows both keys masked and the read sent
// back keeps them.
func TestReadsMaskTheKeys(t *testing.T) {
	reg, err := sink.NewRegistry(NewType(Options{}))
	if err != nil {
		t.Fatal(err)
	}
	raw := json.RawMessage(`{"type":"s3","bucket":"orders","region":"us-east-1","access_key_id":"` + testKeyID + `","secret_access_key":"` + testSecret + `"}`)
	obj, _ := reg.Object(raw)
	stored, err := obj.Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	view, err := reg.Show(Name, stored.Config.Public, stored.CredentialFields)
	if err != nil {
		t.Fatal(err)
	}
	read, _ := json.Marshal(view)
	if strings.Contains(string(read), testSecret) || strings.Contains(string(read), testKeyID) {
		t.Fatalf("read %s shows a credential", read)
	}
	if view["access_key_id"] != sink.Masked || view["secret_access_key"] != sink.Masked {
		t.Fatalf("read %s does not show the keys masked", read)
	}
	obj, _ = reg.Object(read)
	again, err := obj.Parse(&stored.Config)
	if err != nil {
		t.Fatalf("Parse of the read: %v", err)
	}
	if stored.Config.Differs(again.Config) {
		t.Fatal("the read sent back changed the configuration")
	}
}

func TestObjectKey(t *testing.T) {
	at := time.Date(2026, 3, 4, 23, 59, 59, 0, time.FixedZone("UTC-3", -3*3600))
	for _, tc := range []struct {
		prefix, tenant, id string
		when               time.Time
		want               string
	}{
		{"", "acme", "evt-1", at, "acme/2026/03/05/02/evt-1"},
		{"events/", "acme", "evt-1", at.UTC(), "events/acme/2026/03/05/02/evt-1"},
		{"events-", "t1", "0190f5d2-7c1e-7abc-8def-0123456789ab", time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC), "events-t1/2025/12/31/00/0190f5d2-7c1e-7abc-8def-0123456789ab"},
	} {
		got := ObjectKey(tc.prefix, sink.Delivery{TenantID: tc.tenant, EventID: tc.id, Time: tc.when})
		if got != tc.want {
			t.Errorf("ObjectKey(%q, %s, %s, %s) = %q, want %q", tc.prefix, tc.tenant, tc.id, tc.when, got, tc.want)
		}
	}
}

func TestBuildPutRefusesWhatS3CannotTake(t *testing.T) {
	long := sink.Delivery{TenantID: "t", EventID: strings.Repeat("e", MaxKeyBytes), Time: time.Now()}
	if _, err := buildPut("orders", "", long); err == nil || !strings.Contains(err.Error(), "key too long") {
		t.Errorf("buildPut of a %d-byte id = %v, want the key refused", MaxKeyBytes, err)
	}
	accented := sink.Delivery{TenantID: "t", EventID: "e", SchemaVersion: "1.0-é", Time: time.Now()}
	if _, err := buildPut("orders", "", accented); err == nil || !strings.Contains(err.Error(), sink.AttrSchemaVersion) {
		t.Errorf("buildPut of non-ASCII metadata = %v, want it refused naming the field", err)
	}
}
