package subs

import (
	"testing"

	"github.com/spf13/pflag"
)

func TestUpdateSetsAndRemovesTheRateLimit(t *testing.T) {
	body := func(args ...string) (ordering *string, rate struct {
		set, null bool
		value     float64
	}) {
		t.Helper()
		var spec specFlags
		fs := pflag.NewFlagSet("update", pflag.ContinueOnError)
		spec.register(fs, true)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		in, err := spec.updateBody(fs.Changed, func() (string, error) { return "webhook", nil })
		if err != nil {
			t.Fatal(err)
		}
		rate.set, rate.null, rate.value = in.RateLimit.Set, in.RateLimit.Null, in.RateLimit.Value
		return in.Ordering, rate
	}
	if ordering, rate := body("--rate-limit", "5", "--ordering", "tenant"); ordering == nil || *ordering != "tenant" ||
		!rate.set || rate.null || rate.value != 5 {
		t.Errorf("ordering %v, rate_limit %+v", ordering, rate)
	}
	if ordering, rate := body("--rate-limit", "0"); ordering != nil || !rate.set || !rate.null {
		t.Errorf("--rate-limit 0: ordering %v, rate_limit %+v; want rate_limit null and ordering untouched", ordering, rate)
	}
}
