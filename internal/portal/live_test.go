package portal

import (
	"testing"
	"time"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestChangedSendsEachDeliveryOncePerState(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	status := 503
	seen := map[string]string{}
	first := []hubapi.Delivery{ // newest first, as the list gives them
		{ID: "b", State: "pending", CreatedAt: at.Add(time.Second)},
		{ID: "a", State: "succeeded", Attempts: 1, CreatedAt: at},
	}
	if got := ids(Changed(seen, first)); got != "a,b" {
		t.Errorf("first look sent %s, want a,b oldest first", got)
	}
	if got := ids(Changed(seen, first)); got != "" {
		t.Errorf("the same page again sent %s, want nothing", got)
	}
	second := []hubapi.Delivery{
		{ID: "c", State: "pending", CreatedAt: at.Add(2 * time.Second)},
		{ID: "b", State: "pending", Attempts: 1, LastStatus: &status, CreatedAt: at.Add(time.Second)},
		{ID: "a", State: "succeeded", Attempts: 1, CreatedAt: at},
	}
	sent := Changed(seen, second)
	if got := ids(sent); got != "b,c" {
		t.Errorf("after b's attempt and c's creation sent %s, want b,c", got)
	}
	if sent[0].LastStatus != "503" || sent[0].URL != "/portal/deliveries/b" {
		t.Errorf("b sent as %+v", sent[0])
	}
}

func ids(ds []LiveDelivery) string {
	out := ""
	for i, d := range ds {
		if i > 0 {
			out += ","
		}
		out += d.ID
	}
	return out
}
