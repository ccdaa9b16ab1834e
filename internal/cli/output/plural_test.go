package output

import "testing"

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 attempts"}, {1, "1 attempt"}, {2, "2 attempts"}, {-1, "-1 attempts"}} {
		if got := Count(tc.n, "attempt", "attempts"); got != tc.want {
			t.Errorf("Count(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
