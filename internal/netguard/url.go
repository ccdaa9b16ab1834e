package netguard

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
)

// CheckURL is the static half of the policy, applied when a destination URL
// is configured: an absolute http or https URL with a host, a port in range
// and no user information. It does not resolve the host; Dialer checks the
// addresses when a connection is made. Its errors never repeat the URL, which
// may carry a token in its query.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("not a valid URL")
	}
	switch {
	case u.Scheme == "":
		return errors.New("must be an absolute URL starting with https:// or http://")
	case u.Scheme != "https" && u.Scheme != "http":
		return errors.New("scheme must be https or http")
	case u.Opaque != "":
		return errors.New("must be written scheme://host/path")
	case u.User != nil:
		// Whatever is stored in the URL is shown on every read and in logs;
		// credentials belong in the signature the hub adds.
		return errors.New("must not contain user information (user:password@)")
	case u.Hostname() == "":
		return errors.New("must have a host")
	}
	if port := u.Port(); port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return errors.New("port must be between 1 and 65535")
		}
	}
	return nil
}

// TargetRules say how strictly CheckTarget judges a configured URL.
type TargetRules struct {
	// MaxLength bounds the stored text; 0 means no bound.
	MaxLength int
	// BaseOnly refuses a query or fragment: the URL is a service endpoint
	// or resource a client appends to, not a full request target.
	BaseOnly bool
	// AllowPrivate skips the address policy for a literal IP host.
	AllowPrivate bool
}

// CheckTarget is CheckURL for a destination a tenant configures: bounded in
// length, optionally base-only, and with a literal IP host judged by
// Allowed at once (unless AllowPrivate), so an obviously unreachable target
// is refused when it is configured. Host names are judged at dial time by
// Dialer. It returns the parsed URL.
func CheckTarget(raw string, rules TargetRules) (*url.URL, error) {
	if rules.MaxLength > 0 && len(raw) > rules.MaxLength {
		return nil, fmt.Errorf("must be at most %d characters", rules.MaxLength)
	}
	if err := CheckURL(raw); err != nil {
		return nil, err
	}
	u, err := url.Parse(raw)
	if err != nil { // CheckURL has parsed it already
		return nil, errors.New("not a valid URL")
	}
	if rules.BaseOnly && (u.RawQuery != "" || u.Fragment != "") {
		return nil, errors.New("must not have a query or fragment")
	}
	if ip, err := netip.ParseAddr(u.Hostname()); err == nil && !rules.AllowPrivate {
		if err := Allowed(ip); err != nil {
			return nil, err
		}
	}
	return u, nil
}
