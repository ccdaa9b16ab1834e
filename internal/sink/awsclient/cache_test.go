package awsclient

import "testing"

func TestClientCacheEvictsLeastRecentlyUsed(t *testing.T) {
	cache := NewClientCache[*int](2)
	built := 0
	build := func() *int { built++; n := built; return &n }
	key := func(id string) ClientKey { return KeyOf("us-east-1", "", "", Credentials{AccessKeyID: id}) }
	a, b, c := key("a"), key("b"), key("c")

	first := cache.Get(a, build)
	cache.Get(b, build)
	if again := cache.Get(a, build); again != first {
		t.Fatal("a second get of one key built a new client")
	}
	cache.Get(c, build) // evicts b, the least recently used
	if built != 3 || cache.Len() != 2 {
		t.Fatalf("built %d clients, cache holds %d; want 3 and 2", built, cache.Len())
	}
	if cache.Get(a, build) != first {
		t.Fatal("a was evicted although used more recently than b")
	}
	cache.Get(b, build)
	if built != 4 {
		t.Fatalf("b was not rebuilt after eviction (built %d)", built)
	}
}

func TestKeyOfTellsSecretsAndVariantsApart(t *testing.T) {
	creds := Credentials{AccessKeyID: "k", SecretAccessKey: "one"}
	rotated := Credentials{AccessKeyID: "k", SecretAccessKey: "two"}
	if same := (Credentials{AccessKeyID: "k", SecretAccessKey: "one"}); KeyOf("r", "", "", creds) != KeyOf("r", "", "", same) {
		t.Fatal("one credential set has two keys")
	}
	for name, other := range map[string]ClientKey{
		"rotated secret": KeyOf("r", "", "", rotated),
		"endpoint":       KeyOf("r", "http://e", "", creds),
		"variant":        KeyOf("r", "", "path-style", creds),
		"region":         KeyOf("s", "", "", creds),
	} {
		if other == KeyOf("r", "", "", creds) {
			t.Errorf("another %s shares the key", name)
		}
	}
}
