package netguard

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestAllowedRefuses(t *testing.T) {
	tests := []struct {
		addr      string
		wantRange string // a fragment of RefusedError.Range
	}{
		// IPv4
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "this network"},
		{"10.0.0.1", "10.0.0.0/8, private"},
		{"10.255.255.255", "private"},
		{"100.64.0.1", "CGNAT"},
		{"100.127.255.254", "CGNAT"},
		{"127.0.0.1", "loopback"},
		{"127.255.255.254", "loopback"},
		{"169.254.169.254", "link-local"},
		{"169.254.0.1", "link-local"},
		{"172.16.0.1", "172.16.0.0/12, private"},
		{"172.31.255.255", "private"},
		{"192.0.0.1", "IETF protocol assignments"},
		{"192.0.0.170", "IETF protocol assignments"},
		{"192.0.2.10", "documentation"},
		{"192.88.99.1", "6to4 relay"},
		{"192.168.1.1", "192.168.0.0/16, private"},
		{"198.18.0.1", "benchmarking"},
		{"198.19.255.255", "benchmarking"},
		{"198.51.100.7", "documentation"},
		{"203.0.113.9", "documentation"},
		{"224.0.0.1", "multicast"},
		{"239.255.255.250", "multicast"},
		{"240.0.0.1", "reserved"},
		{"255.255.255.254", "reserved"},
		{"255.255.255.255", "limited broadcast"},

		// IPv6
		{"::", "unspecified"},
		{"::1", "loopback"},
		{"fc00::1", "unique local"},
		{"fd12:3456:789a::1", "unique local"},
		{"fd00:ec2::254", "unique local"}, // AWS IPv6 metadata
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "link-local"},
		{"febf:ffff::1", "link-local"},
		{"fec0::1", "site-local"},
		{"ff02::1", "multicast"},
		{"ff0e::1", "multicast"},
		{"100::1", "discard-only"},
		{"100:0:0:1::1", "dummy prefix"},
		{"2001:db8::1", "documentation"},
		{"3fff::1", "documentation"},
		{"2001::1", "Teredo"},
		{"2001:2::1", "benchmarking"},
		{"2001:10::1", "ORCHID"},
		{"2001:20::1", "ORCHIDv2"},
		{"2001:100::1", "IETF protocol assignments"},
		{"5f00::1", "SRv6"},
		{"64:ff9b:1::a00:1", "local-use NAT64"},
		{"4000::1", "reserved"},
		{"1::1", "reserved"},

		// IPv6 forms judged by the IPv4 address they carry
		{"::ffff:127.0.0.1", "IPv4-mapped IPv6 embedding 127.0.0.0/8, loopback"},
		{"::ffff:10.1.2.3", "IPv4-mapped IPv6 embedding 10.0.0.0/8"},
		{"::ffff:169.254.169.254", "IPv4-mapped IPv6 embedding 169.254.0.0/16"},
		{"::ffff:0.0.0.0", "IPv4-mapped IPv6 embedding 0.0.0.0/32, unspecified"},
		{"::127.0.0.1", "IPv4-compatible IPv6 embedding 127.0.0.0/8"},
		{"::192.168.0.1", "IPv4-compatible IPv6 embedding 192.168.0.0/16"},
		{"::ffff:0:10.0.0.1", "IPv4-translated IPv6 (RFC 2765) embedding 10.0.0.0/8"},
		{"64:ff9b::127.0.0.1", "NAT64 IPv6 (RFC 6052) embedding 127.0.0.0/8"},
		{"64:ff9b::a9fe:a9fe", "NAT64 IPv6 (RFC 6052) embedding 169.254.0.0/16"},
		{"2002:c0a8:0101::1", "6to4 IPv6 (RFC 3056) embedding 192.168.0.0/16"},
		{"2002:7f00:0001::", "6to4 IPv6 (RFC 3056) embedding 127.0.0.0/8"},
		{"2002:6440:0001::", "6to4 IPv6 (RFC 3056) embedding 100.64.0.0/10"},
	}
	for _, tc := range tests {
		t.Run(tc.addr, func(t *testing.T) {
			ip := netip.MustParseAddr(tc.addr)
			err := Allowed(ip)
			refused, ok := errors.AsType[*RefusedError](err)
			if !ok {
				t.Fatalf("Allowed(%s) = %v, want a *RefusedError", tc.addr, err)
			}
			if !strings.Contains(refused.Range, tc.wantRange) {
				t.Fatalf("Allowed(%s) range %q, want it to mention %q", tc.addr, refused.Range, tc.wantRange)
			}
			if refused.Addr != ip.WithZone("") {
				t.Fatalf("Allowed(%s) names address %s", tc.addr, refused.Addr)
			}
		})
	}
}

func TestAllowedAcceptsPublicAddresses(t *testing.T) {
	for _, addr := range []string{
		"1.1.1.1",
		"8.8.8.8",
		"93.184.215.14",
		"100.63.255.255",  // just below CGNAT
		"100.128.0.0",     // just above CGNAT
		"172.15.255.255",  // just below 172.16/12
		"172.32.0.0",      // just above 172.16/12
		"192.0.1.255",     // between 192.0.0/24 and 192.0.2/24
		"192.169.0.1",     // just above 192.168/16
		"198.17.255.255",  // just below benchmarking
		"198.20.0.0",      // just above benchmarking
		"223.255.255.255", // just below multicast
		"2606:4700:4700::1111",
		"2a00:1450:4001:82b::200e",
		"2001:200::1",           // just above 2001::/23
		"2001:db9::1",           // just above documentation
		"::ffff:8.8.8.8",        // mapped public
		"64:ff9b::808:808",      // NAT64 of 8.8.8.8
		"2002:808:808::1",       // 6to4 of 8.8.8.8
		"3fff:1000::1",          // just above 3fff::/20
		"2600:1f18::1%eth0",     // a zone does not change the verdict
		"2001:4860:4860::8888",  //
		"2c0f:fb50:4003::1",     //
		"2403:6200:8000:1::1",   //
		"2620:fe::fe",           //
		"2001:67c:2e8:22::c100", //
	} {
		if err := Allowed(netip.MustParseAddr(addr)); err != nil {
			t.Errorf("Allowed(%s) = %v, want nil", addr, err)
		}
	}
}

func TestAllowedRefusesTheZeroAddr(t *testing.T) {
	if err := Allowed(netip.Addr{}); err == nil {
		t.Fatal("Allowed(zero Addr) = nil, want a refusal")
	}
}

func TestRefusedErrorHidesResolvedAddress(t *testing.T) {
	literal := &RefusedError{Host: "10.0.0.1", Addr: netip.MustParseAddr("10.0.0.1"), Range: "10.0.0.0/8, private (RFC 1918)"}
	if got, want := literal.Error(), "address 10.0.0.1 is refused: 10.0.0.0/8, private (RFC 1918)"; got != want {
		t.Errorf("literal host: %q, want %q", got, want)
	}
	resolved := &RefusedError{Host: "db.internal", Addr: netip.MustParseAddr("10.9.8.7"), Range: "10.0.0.0/8, private (RFC 1918)"}
	got := resolved.Error()
	if want := "host db.internal resolves to a refused address: 10.0.0.0/8, private (RFC 1918)"; got != want {
		t.Errorf("resolved host: %q, want %q", got, want)
	}
	if strings.Contains(got, "10.9.8.7") {
		t.Errorf("message %q reveals what the host resolved to", got)
	}
}
