package maintenance

import (
	"slices"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/store/oncall"
)

func TestBoundTenants(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	backlog := []oncall.TenantBacklog{
		{TenantID: "a", Pending: 100, Due: 90, OldestDue: now.Add(-time.Minute)},
		{TenantID: "b", Pending: 50, Due: 0},
		{TenantID: "other", Pending: 7, Due: 7, OldestDue: now.Add(-time.Hour)},
		{TenantID: "c", Pending: 3, Due: 3, OldestDue: now.Add(-10 * time.Second)},
		{TenantID: "d", Pending: 1, Due: 1, OldestDue: now.Add(time.Second)}, // clock skew: never negative
	}
	cases := []struct {
		limit int
		want  []tenantBacklog
	}{
		{10, []tenantBacklog{
			{"a", 100, 90, 60}, {"b", 50, 0, 0}, {"c", 3, 3, 10}, {"d", 1, 1, 0},
			{OtherTenants, 7, 7, 3600}, // a tenant named "other" is the bucket
		}},
		{2, []tenantBacklog{{"a", 100, 90, 60}, {"b", 50, 0, 0}, {OtherTenants, 11, 11, 3600}}},
		{1, []tenantBacklog{{"a", 100, 90, 60}, {OtherTenants, 61, 11, 3600}}},
	}
	for _, c := range cases {
		if got := boundTenants(backlog, c.limit, now); !slices.Equal(got, c.want) {
			t.Errorf("limit %d:\n got %+v\nwant %+v", c.limit, got, c.want)
		}
	}
	if got := boundTenants(nil, 5, now); len(got) != 0 {
		t.Errorf("no backlog gives %+v, want no series", got)
	}
}
