package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"
)

// Resolver is the part of *net.Resolver the Dialer uses; tests inject one
// that answers without DNS.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Dialer connects only to addresses the policy allows. It resolves the host
// itself, checks every address of the answer and then dials an address, never
// the name, so the address checked is the address connected to: a DNS answer
// that changes between a check and a connect (rebinding) has nothing to slip
// through. Use its DialContext as an http.Transport's, with no proxy: a proxy
// would make the connection the policy never sees.
//
// The zero value applies the policy with the system resolver and dialer.
type Dialer struct {
	// AllowPrivate turns the policy off (STREAMING_HUB_ALLOW_PRIVATE_SINKS,
	// for development against receivers on loopback or a private network).
	AllowPrivate bool
	// Resolver answers host lookups; nil means net.DefaultResolver.
	Resolver Resolver
	// Dial connects to one IP address; nil means a zero net.Dialer.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// minDialTimeout keeps each address of a long answer a usable share of the
// time, as net.Dialer does.
const minDialTimeout = 2 * time.Second

// DialContext resolves address's host, refuses the whole answer when any
// address in it is refused, and dials the allowed addresses in answer order
// until one connects, each with a share of ctx's remaining time. Refusing a
// mixed answer, rather than dialling its allowed part, means that whoever
// controls the DNS cannot decide which half the hub ends up using.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	family, err := ipFamily(network)
	if err != nil {
		return nil, err
	}
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	if host == "" {
		// The system dialer would take an empty host to mean this machine.
		return nil, fmt.Errorf("dial %s %s: missing host", network, address)
	}
	addrs, err := d.resolve(ctx, family, host)
	if err != nil {
		return nil, err
	}
	if !d.AllowPrivate {
		for _, ip := range addrs {
			if refused := refusal(ip); refused != nil {
				refused.Host = host
				return nil, refused
			}
		}
	}
	return d.dialEach(ctx, network, addrs, port)
}

func (d *Dialer) resolve(ctx context.Context, family, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		if (family == "ip4" && !ip.Unmap().Is4()) || (family == "ip6" && !ip.Is6()) {
			return nil, &net.AddrError{Err: "address of the wrong family for " + family, Addr: host}
		}
		return []netip.Addr{ip}, nil
	}
	var resolver Resolver = net.DefaultResolver
	if d.Resolver != nil {
		resolver = d.Resolver
	}
	addrs, err := resolver.LookupNetIP(ctx, family, host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	// The resolver may hand IPv4 answers back in their IPv4-mapped form;
	// dial them as IPv4 so a "tcp4" network accepts them.
	for i, ip := range addrs {
		addrs[i] = ip.Unmap()
	}
	return addrs, nil
}

func (d *Dialer) dialEach(ctx context.Context, network string, addrs []netip.Addr, port string) (net.Conn, error) {
	dial := d.Dial
	if dial == nil {
		var system net.Dialer
		dial = system.DialContext
	}
	var firstErr error
	for i, ip := range addrs {
		if err := ctx.Err(); err != nil {
			return nil, errors.Join(firstErr, err)
		}
		attemptCtx, cancel := ctx, context.CancelFunc(func() {})
		if deadline, ok := ctx.Deadline(); ok {
			attemptCtx, cancel = context.WithDeadline(ctx, partialDeadline(time.Now(), deadline, len(addrs)-i))
		}
		conn, err := dial(attemptCtx, network, net.JoinHostPort(ip.String(), port))
		cancel()
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}

// partialDeadline gives one of remaining addresses its share of the time
// left before deadline, but no less than minDialTimeout while time remains.
func partialDeadline(now, deadline time.Time, remaining int) time.Time {
	left := deadline.Sub(now)
	if remaining <= 1 || left <= 0 {
		return deadline
	}
	share := left / time.Duration(remaining)
	if share < minDialTimeout {
		share = min(minDialTimeout, left)
	}
	return now.Add(share)
}

// ipFamily maps a dial network to the lookup network of its addresses.
func ipFamily(network string) (string, error) {
	switch network {
	case "tcp", "udp":
		return "ip", nil
	case "tcp4", "udp4":
		return "ip4", nil
	case "tcp6", "udp6":
		return "ip6", nil
	}
	return "", net.UnknownNetworkError(network)
}
