package quarantine

import (
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/cli/cmdutil/cmdtest"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/internal/event"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

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
		{ptr(strings.Repeat("k", 30)), "", strings.Repeat("k", 24) + "…"},
		{ptr("a\u202eb"), "", `a\u202eb`},
	}
	for _, c := range cases {
		if got := displayKey(c.key, c.encoding, 24); got != c.want {
			t.Errorf("displayKey(%v, %q) = %q, want %q", c.key, c.encoding, got, c.want)
		}
	}
}

func ptr(s string) *string { return &s }

// TestListFitsAnEightyColumnTerminal renders the widest row a list can
// have (a long topic, the longest reason, a large offset and id) and holds
// every line to 80 columns.
func TestListFitsAnEightyColumnTerminal(t *testing.T) {
	f, out := cmdtest.Terminal(80)
	ios := f.IOStreams
	var longest string
	for _, r := range event.QuarantineReasons() {
		if len(r) > len(longest) {
			longest = string(r)
		}
	}
	item := hubapi.QuarantineSummary{
		QuarantineOrigin: hubapi.QuarantineOrigin{ID: 99999999, Reason: longest, Detail: strings.Repeat("d", 500),
			Topic: "lerian.streaming.midaz_transaction.balance-config-changed", Partition: 127, Offset: 123456789012},
		Headers:         []hubapi.QuarantineHeader{{Key: strings.Repeat("h", 128), Value: strings.Repeat("v", 128)}},
		HeaderCount:     64,
		QuarantineValue: hubapi.QuarantineValue{ValueSize: 5 << 20},
		ReceivedAt:      time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC),
	}
	page := hubapi.Page[hubapi.QuarantineSummary]{Items: []hubapi.QuarantineSummary{item, item}}
	if err := output.PrintPage(output.New(ios, output.Table), page, itemHeader, itemRow, "records", ""); err != nil {
		t.Fatal(err)
	}
	cmdtest.RequireFits(t, out.String(), 80)
	for _, want := range []string{"99999999", "2026-12-01 10:00", longest, "/127/123456789012", "5.0 MiB"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("list lacks %q:\n%s", want, out.String())
		}
	}
}
