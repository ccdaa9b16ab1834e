package freeport

import (
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"
)

func TestEphemeralLow(t *testing.T) {
	tests := []struct {
		content string
		want    int
		ok      bool
	}{
		{"32768\t60999\n", 32768, true},
		{"1024 65535", 1024, true},
		{"", 0, false},
		{"32768", 0, false},
		{"low high", 0, false},
		{"0 65535", 0, false},
		{"70000 80000", 0, false},
	}
	for _, tt := range tests {
		got, ok := ephemeralLow(tt.content)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ephemeralLow(%q) = %d, %v; want %d, %v", tt.content, got, ok, tt.want, tt.ok)
		}
	}
}

func TestPickPort(t *testing.T) {
	tests := []struct {
		name      string
		low, high int
		inRange   bool
	}{
		{"below the ephemeral range", lowestPort, ephemeralFallback, true},
		{"range too small: the kernel picks", 20000, 20000 + minPortChoice - 1, false},
		{"ephemeral range starts below ours", 20000, 1024, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			taken := []int{}
			for range 5 {
				port, err := pickPort(tt.low, tt.high, taken)
				if err != nil {
					t.Fatal(err)
				}
				if slices.Contains(taken, port) {
					t.Fatalf("port %d picked twice", port)
				}
				if tt.inRange && (port < tt.low || port >= tt.high) {
					t.Fatalf("port %d outside [%d, %d)", port, tt.low, tt.high)
				}
				if port < 1 || port > 65535 {
					t.Fatalf("port %d is not a port", port)
				}
				taken = append(taken, port)
			}
		})
	}
}

func TestPickGivesDistinctBindablePortsOutsideExclude(t *testing.T) {
	ports, err := Pick(5, 5432)
	if err != nil {
		t.Fatal(err)
	}
	if len(ports) != 5 {
		t.Fatalf("Pick(5) = %v", ports)
	}
	for i, port := range ports {
		if port == 5432 || slices.Contains(ports[:i], port) {
			t.Fatalf("Pick(5, 5432) = %v: excluded or repeated port", ports)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Fatalf("port %d not bindable: %v", port, err)
		}
		_ = ln.Close()
	}
}

// Parallel callers in one process each get ports of their own, though
// nothing binds them between the picks.
func TestPicksInOneProcessNeverRepeatAPort(t *testing.T) {
	const callers, each = 8, 25
	results := make(chan []int, callers)
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			ports, err := Pick(each)
			if err != nil {
				t.Error(err)
			}
			results <- ports
		})
	}
	wg.Wait()
	close(results)
	seen := map[int]bool{}
	for ports := range results {
		for _, port := range ports {
			if seen[port] {
				t.Fatalf("port %d handed out twice", port)
			}
			seen[port] = true
		}
	}
	if len(seen) != callers*each {
		t.Fatalf("got %d ports, want %d", len(seen), callers*each)
	}
}
