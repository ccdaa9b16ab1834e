package match

import "testing"

func TestMatches(t *testing.T) {
	event := Event{TenantID: "acme", Key: "transaction.posted", SchemaMajor: 1, Source: "midaz"}
	base := Subscription{TenantID: "acme", Enabled: true, VerificationState: VerificationActive, EventTypes: []string{"transaction.posted"}, SchemaMajor: 1}
	with := func(mod func(*Subscription)) Subscription {
		s := base
		s.EventTypes = append([]string(nil), base.EventTypes...)
		mod(&s)
		return s
	}
	tests := []struct {
		name string
		sub  Subscription
		want bool
	}{
		{"exact key", base, true},
		{"other tenant", with(func(s *Subscription) { s.TenantID = "other" }), false},
		{"disabled", with(func(s *Subscription) { s.Enabled = false }), false},
		{"verification pending", with(func(s *Subscription) { s.VerificationState = VerificationPending }), false},
		{"verification failed", with(func(s *Subscription) { s.VerificationState = VerificationFailed }), false},
		{"wrong schema major", with(func(s *Subscription) { s.SchemaMajor = 2 }), false},
		{"origin equal", with(func(s *Subscription) { s.Origin = "midaz" }), true},
		{"origin differs", with(func(s *Subscription) { s.Origin = "ledger" }), false},
		{"prefix wildcard", with(func(s *Subscription) { s.EventTypes = []string{"transaction.*"} }), true},
		{"other prefix", with(func(s *Subscription) { s.EventTypes = []string{"balance.*"} }), false},
		{"star", with(func(s *Subscription) { s.EventTypes = []string{"*"} }), true},
		{"second pattern matches", with(func(s *Subscription) { s.EventTypes = []string{"balance.updated", "transaction.posted"} }), true},
		{"no pattern matches", with(func(s *Subscription) { s.EventTypes = []string{"transaction.reverted"} }), false},
		{"empty patterns", with(func(s *Subscription) { s.EventTypes = nil }), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Matches(tt.sub, event); got != tt.want {
				t.Errorf("Matches = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPatternMatches(t *testing.T) {
	tests := []struct {
		pattern, key string
		want         bool
	}{
		{"*", "anything.at-all", true},
		{"transaction.*", "transaction.posted", true},
		{"transaction.*", "transactions.posted", false}, // prefix of the resource, not the resource
		{"transaction.*", "transaction.", false},
		{"transaction.*", "transaction", false},
		{"trans.*", "transaction.posted", false},
		{"transaction.posted", "transaction.posted", true},
		{"transaction.posted", "transaction.posted2", false},
		{"Transaction.posted", "transaction.posted", false}, // keys are case-sensitive
		{"balance.config-changed", "balance.config-changed", true},
	}
	for _, tt := range tests {
		if got := PatternMatches(tt.pattern, tt.key); got != tt.want {
			t.Errorf("PatternMatches(%q, %q) = %v, want %v", tt.pattern, tt.key, got, tt.want)
		}
	}
}

func TestValidatePattern(t *testing.T) {
	valid := []string{"*", "transaction.*", "transaction.posted", "balance.config-changed", "a_b.c-d", "0.1"}
	invalid := []string{"", "transaction", "*.posted", "transaction.**", ".posted", "transaction.", "Transaction.posted",
		"transaction.posted.extra", "-a.b", "a.-b", "a b.c", "transaction.*x", "**"}
	for _, p := range valid {
		if err := ValidatePattern(p); err != nil {
			t.Errorf("ValidatePattern(%q) = %v, want nil", p, err)
		}
	}
	for _, p := range invalid {
		if err := ValidatePattern(p); err == nil {
			t.Errorf("ValidatePattern(%q) = nil, want an error", p)
		}
	}
}

func FuzzPatternMatches(f *testing.F) {
	for _, seed := range [][2]string{{"*", "a.b"}, {"a.*", "a.b"}, {"a.b", "a.b"}, {".*", "."}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, pattern, key string) {
		got := PatternMatches(pattern, key)
		// A valid prefix pattern may only match keys of its own resource.
		if res, ok := stringsCutSuffix(pattern, ".*"); ok && got && ValidatePattern(pattern) == nil {
			if len(key) <= len(res)+1 || key[:len(res)+1] != res+"." {
				t.Fatalf("%q matched %q outside its resource type", pattern, key)
			}
		}
	})
}

func stringsCutSuffix(s, suffix string) (string, bool) {
	if len(s) >= len(suffix) && s[len(s)-len(suffix):] == suffix {
		return s[:len(s)-len(suffix)], true
	}
	return s, false
}
