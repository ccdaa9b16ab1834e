package netguard

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeResolver answers from a table and records what it was asked.
type fakeResolver struct {
	answers map[string][]netip.Addr
	err     error

	mu    sync.Mutex
	asked []string // "network host"
}

func (r *fakeResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	r.asked = append(r.asked, network+" "+host)
	r.mu.Unlock()
	if r.err != nil {
		return nil, r.err
	}
	return slices.Clone(r.answers[host]), nil
}

// recordingDial never connects: it records each address it is asked to dial
// and fails those listed in failing, so no test sends a packet anywhere.
type recordingDial struct {
	failing map[string]bool

	mu     sync.Mutex
	dialed []string
}

var errNotConnected = errors.New("test dial: not connecting")

func (d *recordingDial) dial(_ context.Context, network, address string) (net.Conn, error) {
	d.mu.Lock()
	d.dialed = append(d.dialed, network+" "+address)
	d.mu.Unlock()
	if d.failing[address] {
		return nil, errNotConnected
	}
	client, server := net.Pipe()
	server.Close()
	return client, nil
}

func addrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out
}

func TestDialerPolicy(t *testing.T) {
	resolver := &fakeResolver{answers: map[string][]netip.Addr{
		"public.example":     addrs("93.184.215.14"),
		"dual.example":       addrs("2606:4700::6810:84e5", "93.184.215.14"),
		"private.example":    addrs("10.0.0.7"),
		"loopback.example":   addrs("127.0.0.1"),
		"metadata.example":   addrs("169.254.169.254"),
		"mixed.example":      addrs("93.184.215.14", "192.168.1.20"),
		"mixed-last.example": addrs("2606:4700::6810:84e5", "93.184.215.14", "fd00::1"),
		"mapped.example":     addrs("::ffff:127.0.0.1"),
		"mapped-pub.example": addrs("::ffff:93.184.215.14"),
	}}

	tests := []struct {
		name         string
		allowPrivate bool
		network      string
		address      string
		wantDialed   []string // what reached the dial function, in order
		wantRefused  string   // a fragment of the *RefusedError; "" means a connection
	}{
		{name: "public hostname dialled by address", network: "tcp", address: "public.example:443",
			wantDialed: []string{"tcp 93.184.215.14:443"}},
		{name: "public literal", network: "tcp", address: "93.184.215.14:80",
			wantDialed: []string{"tcp 93.184.215.14:80"}},
		{name: "public IPv6 literal", network: "tcp", address: "[2606:4700::6810:84e5]:443",
			wantDialed: []string{"tcp [2606:4700::6810:84e5]:443"}},
		{name: "dual-stack answer dials the first", network: "tcp", address: "dual.example:443",
			wantDialed: []string{"tcp [2606:4700::6810:84e5]:443"}},
		{name: "mapped answer dialled as IPv4", network: "tcp4", address: "mapped-pub.example:443",
			wantDialed: []string{"tcp4 93.184.215.14:443"}},

		{name: "hostname resolving to private", network: "tcp", address: "private.example:443",
			wantRefused: "host private.example resolves to a refused address: 10.0.0.0/8"},
		{name: "hostname resolving to loopback", network: "tcp", address: "loopback.example:8080",
			wantRefused: "127.0.0.0/8, loopback"},
		{name: "hostname resolving to cloud metadata", network: "tcp", address: "metadata.example:80",
			wantRefused: "169.254.0.0/16, link-local"},
		{name: "mixed answer, private second", network: "tcp", address: "mixed.example:443",
			wantRefused: "192.168.0.0/16"},
		{name: "mixed answer, private last of three", network: "tcp", address: "mixed-last.example:443",
			wantRefused: "fc00::/7"},
		{name: "answer in IPv4-mapped form", network: "tcp", address: "mapped.example:443",
			wantRefused: "127.0.0.0/8, loopback"},
		{name: "loopback literal", network: "tcp", address: "127.0.0.1:8080",
			wantRefused: "address 127.0.0.1 is refused"},
		{name: "IPv6 loopback literal", network: "tcp", address: "[::1]:8080",
			wantRefused: "address ::1 is refused"},
		{name: "IPv4-mapped loopback literal", network: "tcp", address: "[::ffff:7f00:1]:8080",
			wantRefused: "IPv4-mapped IPv6 embedding 127.0.0.0/8"},
		{name: "link-local literal with zone", network: "tcp", address: "[fe80::1%eth0]:80",
			wantRefused: "fe80::/10"},
		{name: "unspecified literal", network: "tcp", address: "0.0.0.0:80",
			wantRefused: "unspecified"},

		{name: "allow private: loopback hostname", allowPrivate: true, network: "tcp", address: "loopback.example:8080",
			wantDialed: []string{"tcp 127.0.0.1:8080"}},
		{name: "allow private: loopback literal", allowPrivate: true, network: "tcp", address: "127.0.0.1:8080",
			wantDialed: []string{"tcp 127.0.0.1:8080"}},
		{name: "allow private: mixed answer", allowPrivate: true, network: "tcp", address: "mixed.example:443",
			wantDialed: []string{"tcp 93.184.215.14:443"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recordingDial{}
			d := &Dialer{AllowPrivate: tc.allowPrivate, Resolver: resolver, Dial: rec.dial}
			conn, err := d.DialContext(t.Context(), tc.network, tc.address)
			if conn != nil {
				conn.Close()
			}
			if tc.wantRefused != "" {
				refused, ok := errors.AsType[*RefusedError](err)
				if !ok {
					t.Fatalf("DialContext = %v, want a *RefusedError", err)
				}
				if !strings.Contains(refused.Error(), tc.wantRefused) {
					t.Fatalf("refusal %q, want it to mention %q", refused, tc.wantRefused)
				}
				if len(rec.dialed) != 0 {
					t.Fatalf("refused, yet dialled %v", rec.dialed)
				}
				return
			}
			if err != nil {
				t.Fatalf("DialContext = %v, want a connection", err)
			}
			if !slices.Equal(rec.dialed, tc.wantDialed) {
				t.Fatalf("dialled %v, want %v", rec.dialed, tc.wantDialed)
			}
		})
	}
}

func TestDialerTriesNextAddressWhenOneFails(t *testing.T) {
	resolver := &fakeResolver{answers: map[string][]netip.Addr{
		"dual.example": addrs("2606:4700::6810:84e5", "93.184.215.14"),
	}}
	rec := &recordingDial{failing: map[string]bool{"[2606:4700::6810:84e5]:443": true}}
	d := &Dialer{Resolver: resolver, Dial: rec.dial}

	conn, err := d.DialContext(t.Context(), "tcp", "dual.example:443")
	if err != nil {
		t.Fatalf("DialContext = %v, want the IPv4 address to connect", err)
	}
	conn.Close()
	want := []string{"tcp [2606:4700::6810:84e5]:443", "tcp 93.184.215.14:443"}
	if !slices.Equal(rec.dialed, want) {
		t.Fatalf("dialled %v, want %v", rec.dialed, want)
	}
}

func TestDialerReportsFirstDialErrorWhenAllFail(t *testing.T) {
	resolver := &fakeResolver{answers: map[string][]netip.Addr{
		"dual.example": addrs("2606:4700::6810:84e5", "93.184.215.14"),
	}}
	rec := &recordingDial{failing: map[string]bool{"[2606:4700::6810:84e5]:443": true, "93.184.215.14:443": true}}
	d := &Dialer{Resolver: resolver, Dial: rec.dial}

	if _, err := d.DialContext(t.Context(), "tcp", "dual.example:443"); !errors.Is(err, errNotConnected) {
		t.Fatalf("DialContext = %v, want the dial error", err)
	}
	if len(rec.dialed) != 2 {
		t.Fatalf("dialled %v, want both addresses tried", rec.dialed)
	}
}

func TestDialerResolvesForTheDialFamily(t *testing.T) {
	for network, family := range map[string]string{"tcp": "ip", "tcp4": "ip4", "tcp6": "ip6"} {
		resolver := &fakeResolver{answers: map[string][]netip.Addr{"h.example": addrs("93.184.215.14", "2606:4700::6810:84e5")}}
		d := &Dialer{Resolver: resolver, Dial: (&recordingDial{}).dial}
		conn, err := d.DialContext(t.Context(), network, "h.example:443")
		if err != nil {
			t.Fatalf("%s: %v", network, err)
		}
		conn.Close()
		if want := []string{family + " h.example"}; !slices.Equal(resolver.asked, want) {
			t.Errorf("%s: resolver asked %v, want %v", network, resolver.asked, want)
		}
	}
}

func TestDialerErrors(t *testing.T) {
	dnsFailure := &net.DNSError{Err: "server misbehaving", Name: "broken.example"}
	tests := []struct {
		name     string
		resolver *fakeResolver
		network  string
		address  string
		check    func(error) bool
	}{
		{"resolver error passed through", &fakeResolver{err: dnsFailure}, "tcp", "broken.example:443",
			func(err error) bool { return errors.Is(err, dnsFailure) }},
		{"empty answer is no such host", &fakeResolver{}, "tcp", "empty.example:443",
			func(err error) bool { e, ok := errors.AsType[*net.DNSError](err); return ok && e.IsNotFound }},
		{"missing port", &fakeResolver{}, "tcp", "public.example", func(err error) bool { return err != nil }},
		{"missing host", &fakeResolver{}, "tcp", ":443", func(err error) bool { return err != nil && strings.Contains(err.Error(), "missing host") }},
		{"non-IP network", &fakeResolver{}, "unix", "/tmp/sock:0",
			func(err error) bool { _, ok := errors.AsType[net.UnknownNetworkError](err); return ok }},
		{"IPv6 literal on tcp4", &fakeResolver{}, "tcp4", "[2606:4700::1]:443",
			func(err error) bool { _, ok := errors.AsType[*net.AddrError](err); return ok }},
		{"IPv4 literal on tcp6", &fakeResolver{}, "tcp6", "93.184.215.14:443",
			func(err error) bool { _, ok := errors.AsType[*net.AddrError](err); return ok }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recordingDial{}
			d := &Dialer{Resolver: tc.resolver, Dial: rec.dial}
			conn, err := d.DialContext(t.Context(), tc.network, tc.address)
			if conn != nil {
				conn.Close()
			}
			if !tc.check(err) {
				t.Fatalf("DialContext = %v, not the expected error", err)
			}
			if len(rec.dialed) != 0 {
				t.Fatalf("dialled %v after an error", rec.dialed)
			}
		})
	}
}

func TestDialerStopsWhenContextEnds(t *testing.T) {
	resolver := &fakeResolver{answers: map[string][]netip.Addr{"public.example": addrs("93.184.215.14")}}
	rec := &recordingDial{}
	d := &Dialer{Resolver: resolver, Dial: rec.dial}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := d.DialContext(ctx, "tcp", "public.example:443"); !errors.Is(err, context.Canceled) {
		t.Fatalf("DialContext = %v, want context.Canceled", err)
	}
	if len(rec.dialed) != 0 {
		t.Fatalf("dialled %v after cancellation", rec.dialed)
	}
}

func TestPartialDeadline(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	tests := []struct {
		name      string
		left      time.Duration
		remaining int
		want      time.Duration // from now
	}{
		{"last address gets all", 10 * time.Second, 1, 10 * time.Second},
		{"even share", 10 * time.Second, 2, 5 * time.Second},
		{"share floored at the minimum", 3 * time.Second, 3, 2 * time.Second},
		{"minimum capped by what is left", time.Second, 3, time.Second},
		{"deadline passed", -time.Second, 2, -time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := partialDeadline(now, now.Add(tc.left), tc.remaining)
			if want := now.Add(tc.want); !got.Equal(want) {
				t.Fatalf("partialDeadline = now%+v, want now%+v", got.Sub(now), tc.want)
			}
		})
	}
}
