package deliveries

import (
	"testing"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/iostreams"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestStateSaysWhy(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	f := &cmdutil.Factory{IOStreams: ios}
	held, exhausted := hubapi.HeldBreakerOpen, hubapi.DeadExhausted
	cases := []struct {
		d    hubapi.Delivery
		want string
	}{
		{hubapi.Delivery{State: hubapi.DeliveryPending}, "pending"},
		{hubapi.Delivery{State: hubapi.DeliveryPending, HeldReason: &held}, "pending (held: breaker open)"},
		{hubapi.Delivery{State: hubapi.DeliveryDead, DeadReason: &exhausted}, "dead (exhausted)"},
	}
	for _, c := range cases {
		if got := stateText(f, c.d); got != c.want {
			t.Errorf("stateText(%+v) = %q, want %q", c.d, got, c.want)
		}
	}
}

func TestCellTextKeepsTheTableIntact(t *testing.T) {
	cases := []struct {
		name, in string
		width    int
		want     string
	}{
		{"plain text", "HTTP 503 Service Unavailable", 0, "HTTP 503 Service Unavailable"},
		{"non-ASCII text", "délai dépassé ✓", 0, "délai dépassé ✓"},
		{"line breaks", "first\r\nsecond", 0, `first\x0d\x0asecond`},
		{"terminal escape", "\x1b[2Jcleared", 0, `\x1b[2Jcleared`},
		{"bidi override", "abc\u202edcb", 0, `abc\u202edcb`},
		{"cut to width", "abcdef", 3, "abc…"},
		{"exactly the width", "abc", 3, "abc"},
		{"escapes count as one rune", "\n\n\n\n", 2, `\x0a\x0a…`},
	}
	for _, tc := range cases {
		if got := cellText(tc.in, tc.width); got != tc.want {
			t.Errorf("%s: cellText(%q, %d) = %q, want %q", tc.name, tc.in, tc.width, got, tc.want)
		}
	}
}
