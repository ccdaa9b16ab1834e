package sink

import "testing"

func TestSharedBuildsOncePerKeyAndReleasesAtTheLastUser(t *testing.T) {
	var s Shared[string, *int]
	builds := 0
	build := func() *int { builds++; v := builds; return &v }
	a1 := s.Acquire("a", build)
	a2 := s.Acquire("a", build)
	b := s.Acquire("b", build)
	if a1 != a2 || a1 == b || builds != 2 || s.Len() != 2 {
		t.Fatalf("a1=%p a2=%p b=%p builds=%d len=%d: want one value per key", a1, a2, b, builds, s.Len())
	}
	if s.Release("a") {
		t.Fatal("first release of a reported the last user")
	}
	if !s.Release("a") || s.Len() != 1 {
		t.Fatalf("second release of a: want the last user, %d left", s.Len())
	}
	if s.Release("a") {
		t.Fatal("a release of a key no sink holds reported the last user")
	}
	if a3 := s.Acquire("a", build); a3 == a1 || builds != 3 {
		t.Fatal("a key acquired again after its last release reused the closed value")
	}
}
