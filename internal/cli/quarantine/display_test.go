package quarantine

import (
	"strings"
	"testing"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestCompactHeaders(t *testing.T) {
	headers := []hubapi.QuarantineHeader{
		{Key: "ce-id", Value: "not-a-uuid"},
		{Key: "ce-tenantid", Value: "/w==", Encoding: hubapi.EncodingBase64},
		{Key: "gA==", KeyEncoding: hubapi.EncodingBase64, Value: "v"},
		{Key: "ce-type", Value: "studio.lerian.midaz.transaction.posted"},
	}
	cases := []struct {
		name    string
		headers []hubapi.QuarantineHeader
		width   int
		want    string
	}{
		{"none", nil, 80, "-"},
		{"all fit", headers[:3], 200, "ce-id=not-a-uuid ce-tenantid=base64:/w== base64:gA===v"},
		{"long values cut", headers[3:], 200, "ce-type=studio.lerian.midaz.…"},
		{"too many for the width", headers, 30, "ce-id=not-a-uuid …(+3)"},
		{"first header always shown", headers[3:], 5, "ce-type=studio.lerian.midaz.…"},
	}
	for _, c := range cases {
		if got := compactHeaders(c.headers, len(c.headers), c.width); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
	// A summary holds the first headers only: the count says how many more.
	if got, want := compactHeaders(headers[:1], 40, 200), "ce-id=not-a-uuid …(+39)"; got != want {
		t.Errorf("summary of 40 headers: got %q, want %q", got, want)
	}
	if got, want := compactHeaders(headers, 40, 30), "ce-id=not-a-uuid …(+39)"; got != want {
		t.Errorf("summary of 40 headers, narrow: got %q, want %q", got, want)
	}
}

func TestDisplayKey(t *testing.T) {
	key, binary := "acme", "/wA="
	cases := []struct {
		key      *string
		encoding string
		want     string
	}{
		{nil, "", "-"},
		{&key, "", "acme"},
		{&binary, hubapi.EncodingBase64, "base64:/wA="},
		{ptr(strings.Repeat("k", 30)), "", strings.Repeat("k", keyWidth) + "…"},
		{ptr("a\u202eb"), "", `a\u202eb`},
	}
	for _, c := range cases {
		if got := displayKey(c.key, c.encoding, keyWidth); got != c.want {
			t.Errorf("displayKey(%v, %q) = %q, want %q", c.key, c.encoding, got, c.want)
		}
	}
}

func ptr(s string) *string { return &s }
