package benchmark

import (
	"strings"
	"testing"
	"time"
)

func ms(n ...int) []time.Duration {
	out := make([]time.Duration, len(n))
	for i, v := range n {
		out[i] = time.Duration(v) * time.Millisecond
	}
	return out
}

func TestPercentile(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one value is every percentile", ms(7), 99, 7 * time.Millisecond},
		{"median of 1..100", hundred, 50, 50 * time.Millisecond},
		{"p95 of 1..100", hundred, 95, 95 * time.Millisecond},
		{"p99 of 1..100", hundred, 99, 99 * time.Millisecond},
		{"p100 is the max", hundred, 100, 100 * time.Millisecond},
		{"nearest rank rounds up", ms(1, 2, 3), 50, 2 * time.Millisecond},
		{"a tiny p is the min", ms(1, 2, 3), 0.1, time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percentile(tt.sorted, tt.p); got != tt.want {
				t.Errorf("Percentile(%v) = %v, want %v", tt.p, got, tt.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name string
		in   []time.Duration
		want *Latency
	}{
		{"none", nil, nil},
		{"unsorted input", ms(30, 10, 20, 40), &Latency{P50: 20, P95: 40, P99: 40, Max: 40}},
		{"sub-millisecond", []time.Duration{500 * time.Microsecond}, &Latency{P50: 0.5, P95: 0.5, P99: 0.5, Max: 0.5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Summarize(tt.in)
			if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
				t.Errorf("Summarize = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestRateAndRatio(t *testing.T) {
	tests := []struct {
		name      string
		n         int
		elapsed   time.Duration
		bare      float64
		wantRate  float64
		wantRatio float64
	}{
		{"plain", 1000, 2 * time.Second, 2000, 500, 0.25},
		{"no time passed", 10, 0, 100, 0, 0},
		{"no bare rate", 100, time.Second, 0, 100, 0},
		{"faster than bare", 300, time.Second, 100, 300, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rate := Rate(tt.n, tt.elapsed)
			if rate != tt.wantRate {
				t.Errorf("Rate = %v, want %v", rate, tt.wantRate)
			}
			if got := Ratio(rate, tt.bare); got != tt.wantRatio {
				t.Errorf("Ratio = %v, want %v", got, tt.wantRatio)
			}
		})
	}
}

func TestProcStatTicks(t *testing.T) {
	// A real line's shape: pid (comm) state ppid ... utime stime ...
	fields := func(comm string, utime, stime string) string {
		return "4242 (" + comm + ") S 1 4242 4242 0 -1 4194560 1234 0 0 0 " + utime + " " + stime + " 0 0 20 0 12 0 5678 123456789 2048"
	}
	tests := []struct {
		name      string
		stat      string
		wantComm  string
		wantTicks uint64
		wantErr   string
	}{
		{"plain", fields("hubctl", "150", "25"), "hubctl", 175, ""},
		{"postgres backend", fields("postgres", "7", "3"), "postgres", 10, ""},
		{"name with spaces and parentheses", fields("my (odd) name", "1", "2"), "my (odd) name", 3, ""},
		{"no parentheses", "4242 hubctl S 1", "", 0, "no command name"},
		{"truncated", "4242 (hubctl) S 1 2 3", "", 0, "fields after the command name"},
		{"not a number", fields("hubctl", "x", "2"), "", 0, "utime"},
		{"negative stime", fields("hubctl", "1", "-2"), "", 0, "stime"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			comm, ticks, err := ProcStatTicks(tt.stat)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || comm != tt.wantComm || ticks != tt.wantTicks {
				t.Errorf("= %q, %d, %v; want %q, %d", comm, ticks, err, tt.wantComm, tt.wantTicks)
			}
		})
	}
}

func TestMicrosPerDelivery(t *testing.T) {
	tests := []struct {
		name          string
		before, after uint64
		delivered     int
		want          float64
		wantNil       bool
	}{
		{"one second over 10000", 100, 200, 10000, 100, false},
		{"nothing used", 5, 5, 10, 0, false},
		{"nothing delivered", 1, 2, 0, 0, true},
		{"counter went backwards", 9, 2, 10, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MicrosPerDelivery(tt.before, tt.after, tt.delivered)
			if tt.wantNil {
				if got != nil {
					t.Errorf("= %v, want nil", *got)
				}
				return
			}
			if got == nil || *got != tt.want {
				t.Errorf("= %v, want %v", got, tt.want)
			}
		})
	}
}

func TestProcStatusKiB(t *testing.T) {
	status := "Name:\thubctl\nVmPeak:\t 1862132 kB\nVmHWM:\t   98304 kB\nVmRSS:\t   81920 kB\nThreads:\t12\n"
	tests := []struct {
		status, field string
		want          uint64
		ok            bool
	}{
		{status, "VmHWM", 98304, true},
		{status, "VmRSS", 81920, true},
		{status, "VmSwap", 0, false},             // absent
		{status, "Threads", 0, false},            // not a memory field
		{"VmHWM:\tlots kB\n", "VmHWM", 0, false}, // not a number
		{"VmHWM:\t12 MB\n", "VmHWM", 0, false},   // another unit
		{"", "VmHWM", 0, false},
	}
	for _, tt := range tests {
		got, ok := ProcStatusKiB(tt.status, tt.field)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ProcStatusKiB(%q, %q) = %d, %v; want %d, %v", tt.status, tt.field, got, ok, tt.want, tt.ok)
		}
	}
}
