package netguard

import (
	"errors"
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
