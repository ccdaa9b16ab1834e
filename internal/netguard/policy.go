// Package netguard is the hub's outbound address policy (docs/consuming.md, What a delivery looks like): which
// addresses a subscriber-supplied destination may make the hub connect to.
//
// A tenant chooses where the hub sends requests, so without a policy a
// subscription could aim the hub at its own loopback services, the cloud
// metadata endpoint or the private network it runs in. The policy is a pure
// decision (Allowed) applied at dial time, after DNS, by Dialer: checking a
// hostname when the subscription is created proves nothing about what it
// resolves to when a delivery is made.
package netguard

import (
	"fmt"
	"net/netip"
)

// RefusedError says why an address may not be dialled. Its message names the
// refused range, and the address only when it is what the caller asked for:
// echoing what a hostname resolved to would let a tenant map the hub's
// internal DNS through verification errors.
type RefusedError struct {
	// Host is the host the caller asked for; empty for a bare decision.
	Host string
	// Addr is the refused address.
	Addr netip.Addr
	// Range describes the refused range, e.g. "10.0.0.0/8, private (RFC 1918)".
	Range string
}

func (e *RefusedError) Error() string {
	if e.Host == "" || e.Host == e.Addr.String() {
		return fmt.Sprintf("address %s is refused: %s", e.Addr, e.Range)
	}
	return fmt.Sprintf("host %s resolves to a refused address: %s", e.Host, e.Range)
}

// blockedRange is one range the policy refuses and the words that explain it.
type blockedRange struct {
	prefix netip.Prefix
	what   string
}

// The first matching entry names the refusal, so narrower ranges come before
// the wider ones containing them.
var blockedV4 = []blockedRange{
	{netip.MustParsePrefix("0.0.0.0/32"), "unspecified"},
	{netip.MustParsePrefix("0.0.0.0/8"), `"this network" (RFC 791)`},
	{netip.MustParsePrefix("10.0.0.0/8"), "private (RFC 1918)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared address space, CGNAT (RFC 6598)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local, incl. cloud metadata (RFC 3927)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private (RFC 1918)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments (RFC 6890)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation (RFC 5737)"},
	{netip.MustParsePrefix("192.88.99.0/24"), "6to4 relay anycast (RFC 7526)"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private (RFC 1918)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking (RFC 2544)"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation (RFC 5737)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation (RFC 5737)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("255.255.255.255/32"), "limited broadcast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved (RFC 1112)"},
}

var blockedV6 = []blockedRange{
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64 (RFC 8215)"},
	{netip.MustParsePrefix("100::/64"), "discard-only (RFC 6666)"},
	{netip.MustParsePrefix("100:0:0:1::/64"), "dummy prefix (RFC 9780)"},
	// Teredo embeds an obfuscated client address and relays through third
	// parties; nothing legitimate hosts a webhook there.
	{netip.MustParsePrefix("2001::/32"), "Teredo (RFC 4380)"},
	{netip.MustParsePrefix("2001:2::/48"), "benchmarking (RFC 5180)"},
	{netip.MustParsePrefix("2001:10::/28"), "ORCHID (RFC 4843)"},
	{netip.MustParsePrefix("2001:20::/28"), "ORCHIDv2 (RFC 7343)"},
	{netip.MustParsePrefix("2001::/23"), "IETF protocol assignments (RFC 2928)"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation (RFC 3849)"},
	{netip.MustParsePrefix("3fff::/20"), "documentation (RFC 9637)"},
	{netip.MustParsePrefix("5f00::/16"), "SRv6 SIDs (RFC 9602)"},
	{netip.MustParsePrefix("fc00::/7"), "unique local (RFC 4193)"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local (RFC 3879)"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

// globalUnicastV6 is the only IPv6 space IANA allocates for the public
// internet; everything outside it that is not an IPv4 embedding is reserved.
var globalUnicastV6 = netip.MustParsePrefix("2000::/3")

// v4Embedding is an IPv6 form that carries an IPv4 address and reaches, or
// is translated to, that IPv4 host: it must be judged by what it carries.
type v4Embedding struct {
	prefix netip.Prefix
	what   string
	offset int // byte offset of the IPv4 address in the 16-byte form
}

var v4Embeddings = []v4Embedding{
	{netip.MustParsePrefix("::/96"), "IPv4-compatible IPv6", 12},
	{netip.MustParsePrefix("::ffff:0:0:0/96"), "IPv4-translated IPv6 (RFC 2765)", 12},
	{netip.MustParsePrefix("64:ff9b::/96"), "NAT64 IPv6 (RFC 6052)", 12},
	{netip.MustParsePrefix("2002::/16"), "6to4 IPv6 (RFC 3056)", 2},
}

// Allowed decides whether the hub may connect to ip. It returns nil or a
// *RefusedError naming the range that refuses it. IPv6 forms that embed an
// IPv4 address (mapped, compatible, translated, NAT64, 6to4) are refused
// when the embedded address is.
func Allowed(ip netip.Addr) error {
	if refused := refusal(ip); refused != nil {
		return refused
	}
	return nil
}

// refusal is Allowed with a concrete result type, so the Dialer can name the
// host on it without a type assertion.
func refusal(ip netip.Addr) *RefusedError {
	if !ip.IsValid() {
		return &RefusedError{Addr: ip, Range: "not a valid IP address"}
	}
	// The zone picks an interface; it does not change what the address is.
	ip = ip.WithZone("")
	if ip.Is4In6() {
		return refuseEmbedded(ip, ip.Unmap(), "IPv4-mapped IPv6")
	}
	if ip.Is4() {
		if what, refused := lookup(blockedV4, ip); refused {
			return &RefusedError{Addr: ip, Range: what}
		}
		return nil
	}
	// :: and ::1 lie inside the IPv4-compatible form, so the plain table
	// speaks first.
	if what, refused := lookup(blockedV6, ip); refused {
		return &RefusedError{Addr: ip, Range: what}
	}
	for _, e := range v4Embeddings {
		if e.prefix.Contains(ip) {
			b := ip.As16()
			return refuseEmbedded(ip, netip.AddrFrom4([4]byte(b[e.offset:e.offset+4])), e.what)
		}
	}
	if !globalUnicastV6.Contains(ip) {
		return &RefusedError{Addr: ip, Range: "outside 2000::/3, reserved (RFC 4291)"}
	}
	return nil
}

func refuseEmbedded(outer, inner netip.Addr, form string) *RefusedError {
	if what, refused := lookup(blockedV4, inner); refused {
		return &RefusedError{Addr: outer, Range: form + " embedding " + what}
	}
	return nil
}

func lookup(table []blockedRange, ip netip.Addr) (string, bool) {
	for _, r := range table {
		if r.prefix.Contains(ip) {
			return r.prefix.String() + ", " + r.what, true
		}
	}
	return "", false
}
