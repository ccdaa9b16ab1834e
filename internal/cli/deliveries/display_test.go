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
