package config

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hubctl/hubctl/internal/schedule"
)

// A codec turns a setting's text into its typed field of Config. Its
// allowed phrase completes "must be …" in error messages and documents the
// setting, so the two always say the same thing.
type codec struct {
	allowed string
	decode  func(c *Config, raw string) error
}

// errNotAllowed marks a value the allowed phrase alone explains; any other
// decode error carries a detail worth appending (a regexp syntax error, say).
var errNotAllowed = errors.New("value not allowed")

// reason phrases a decode failure for a Problem.
func (k codec) reason(err error) string {
	if errors.Is(err, errNotAllowed) {
		return "must be " + k.allowed
	}
	return "must be " + k.allowed + ": " + err.Error()
}

// durationSyntax reminds operators that durations need a unit: a bare "30"
// is the most common mistake.
const durationSyntax = ", written like 250ms, 30s or 2h"

func text(field func(*Config) *string) codec {
	return codec{
		allowed: "any text",
		decode: func(c *Config, raw string) error {
			*field(c) = raw
			return nil
		},
	}
}

func nonEmptyText(field func(*Config) *string) codec {
	return codec{
		allowed: "non-empty text",
		decode: func(c *Config, raw string) error {
			if raw == "" {
				return errNotAllowed
			}
			*field(c) = raw
			return nil
		},
	}
}

// oneOf accepts the listed values, ignoring case because operators write
// INFO as readily as info; the canonical spelling is what Config holds.
func oneOf[T ~string](field func(*Config) *T, values ...T) codec {
	names := make([]string, len(values))
	for i, v := range values {
		names[i] = string(v)
		if v == "" {
			names[i] = "empty"
		}
	}
	return codec{
		allowed: "one of " + strings.Join(names, ", "),
		decode: func(c *Config, raw string) error {
			for _, v := range values {
				if strings.EqualFold(raw, string(v)) {
					*field(c) = v
					return nil
				}
			}
			return errNotAllowed
		},
	}
}

var logLevels = map[string]slog.Level{
	"debug": slog.LevelDebug,
	"info":  slog.LevelInfo,
	"warn":  slog.LevelWarn,
	"error": slog.LevelError,
}

func logLevel(field func(*Config) *slog.Level) codec {
	return codec{
		allowed: "one of debug, info, warn, error",
		decode: func(c *Config, raw string) error {
			level, ok := logLevels[strings.ToLower(raw)]
			if !ok {
				return errNotAllowed
			}
			*field(c) = level
			return nil
		},
	}
}

func boolean(field func(*Config) *bool) codec {
	return codec{
		allowed: "true or false",
		decode: func(c *Config, raw string) error {
			b, err := strconv.ParseBool(raw)
			if err != nil {
				return errNotAllowed
			}
			*field(c) = b
			return nil
		},
	}
}

func intBetween(lo, hi int, field func(*Config) *int) codec {
	return intCodec(fmt.Sprintf("an integer from %d to %d", lo, hi), lo, hi, field)
}

func intAtLeast(lo int, field func(*Config) *int) codec {
	return intCodec(fmt.Sprintf("an integer of at least %d", lo), lo, math.MaxInt, field)
}

func intCodec(allowed string, lo, hi int, field func(*Config) *int) codec {
	return codec{
		allowed: allowed,
		decode: func(c *Config, raw string) error {
			n, err := strconv.Atoi(raw)
			if err != nil || n < lo || n > hi {
				return errNotAllowed
			}
			*field(c) = n
			return nil
		},
	}
}

func positiveFloat(field func(*Config) *float64) codec {
	return codec{
		allowed: "a number greater than 0",
		decode: func(c *Config, raw string) error {
			f, err := strconv.ParseFloat(raw, 64)
			// ParseFloat accepts "NaN" and "Inf"; neither is a usable rate.
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 {
				return errNotAllowed
			}
			*field(c) = f
			return nil
		},
	}
}

func durationAtLeast(lo time.Duration, field func(*Config) *time.Duration) codec {
	return durationCodec("a duration of at least "+lo.String()+durationSyntax, lo, field)
}

// retention is a duration no shorter than the longest retry curve a
// subscription may have: a job still retrying must never lose its attempts
// or its event to retention.
func retention(field func(*Config) *time.Duration) codec {
	return durationCodec("a duration of at least "+formatHours(schedule.Longest)+
		", the longest retry curve a subscription may have"+durationSyntax, schedule.Longest, field)
}

func formatHours(d time.Duration) string {
	if d%time.Hour == 0 {
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	}
	return d.String()
}

// durationBetween bounds a duration on both sides, for values a remote
// party (a broker) only accepts within limits.
func durationBetween(lo, hi time.Duration, field func(*Config) *time.Duration) codec {
	k := durationCodec("a duration from "+lo.String()+" to "+hi.String()+durationSyntax, lo, field)
	decode := k.decode
	k.decode = func(c *Config, raw string) error {
		if d, err := time.ParseDuration(raw); err == nil && d > hi {
			return errNotAllowed
		}
		return decode(c, raw)
	}
	return k
}

// positiveDuration is durationAtLeast(1ns) without the silly phrasing.
func positiveDuration(field func(*Config) *time.Duration) codec {
	return durationCodec("a positive duration"+durationSyntax, time.Nanosecond, field)
}

func durationCodec(allowed string, lo time.Duration, field func(*Config) *time.Duration) codec {
	return codec{
		allowed: allowed,
		decode: func(c *Config, raw string) error {
			d, err := time.ParseDuration(raw)
			if err != nil || d < lo {
				return errNotAllowed
			}
			*field(c) = d
			return nil
		},
	}
}

// listenAddress accepts what net.Listen("tcp", …) does: the host may be
// empty (all interfaces) and port 0 picks a free port, which tests rely on.
func listenAddress(field func(*Config) *string) codec {
	return codec{
		allowed: "host:port (host may be empty) with a port from 0 to 65535",
		decode: func(c *Config, raw string) error {
			if _, _, err := splitHostPort(raw, 0); err != nil {
				return errNotAllowed
			}
			*field(c) = raw
			return nil
		},
	}
}

func hostPortList(field func(*Config) *[]string) codec {
	return codec{
		allowed: "a comma-separated list of host:port with ports from 1 to 65535",
		decode: func(c *Config, raw string) error {
			items := splitList(raw)
			if len(items) == 0 {
				return errNotAllowed
			}
			for _, item := range items {
				host, _, err := splitHostPort(item, 1)
				if err == nil && host == "" {
					err = errors.New("missing host")
				}
				if err != nil {
					return fmt.Errorf("%q: %w", item, err)
				}
			}
			*field(c) = items
			return nil
		},
	}
}

// splitHostPort is net.SplitHostPort plus a numeric port range check, which
// net.SplitHostPort leaves to the dialer.
func splitHostPort(addr string, minPort int) (host string, port int, err error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		var addrErr *net.AddrError
		if errors.As(err, &addrErr) {
			return "", 0, errors.New(addrErr.Err)
		}
		return "", 0, err
	}
	port, err = strconv.Atoi(portText)
	if err != nil || port < minPort || port > 65535 {
		return "", 0, fmt.Errorf("port must be a number from %d to 65535", minPort)
	}
	return host, port, nil
}

// splitList splits a comma-separated value, trimming each item and dropping
// empty ones so a trailing comma or ", " spacing is harmless.
func splitList(raw string) []string {
	var items []string
	for item := range strings.SplitSeq(raw, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	return items
}

// pattern compiles a regular expression. An empty include pattern would
// match every topic, internal ones included, so only exclusions may be empty.
func pattern(allowEmpty bool, field func(*Config) **regexp.Regexp) codec {
	allowed := "a non-empty Go regular expression"
	if allowEmpty {
		allowed = "a Go regular expression, or empty to exclude nothing"
	}
	return codec{
		allowed: allowed,
		decode: func(c *Config, raw string) error {
			if raw == "" {
				if !allowEmpty {
					return errNotAllowed
				}
				*field(c) = nil
				return nil
			}
			re, err := regexp.Compile(raw)
			if err != nil {
				return err
			}
			*field(c) = re
			return nil
		},
	}
}

var envVarName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func envVarReference(field func(*Config) *string) codec {
	return codec{
		allowed: "empty or an environment variable name (letters, digits and _, not starting with a digit)",
		decode: func(c *Config, raw string) error {
			if raw != "" && !envVarName.MatchString(raw) {
				return errNotAllowed
			}
			*field(c) = raw
			return nil
		},
	}
}

// optionalSecret accepts an unset secret or one long enough to resist
// guessing; length counts characters, not bytes.
func optionalSecret(minChars int, field func(*Config) *string) codec {
	return codec{
		allowed: fmt.Sprintf("empty or at least %d characters", minChars),
		decode: func(c *Config, raw string) error {
			if raw != "" && utf8.RuneCountInString(raw) < minChars {
				return errNotAllowed
			}
			*field(c) = raw
			return nil
		},
	}
}

// kafkaIDChars is what Kafka accepts in a group.instance.id, as in a topic
// name.
var kafkaIDChars = regexp.MustCompile(`^[A-Za-z0-9._-]{1,249}$`)

// kafkaTopic is empty or a legal Kafka topic name, whose characters and
// length are those of an instance id.
func kafkaTopic(field func(*Config) *string) codec {
	c := kafkaInstanceID(field)
	c.allowed = "empty or a Kafka topic name: 1 to 249 letters, digits, '.', '_' or '-'"
	return c
}

func kafkaInstanceID(field func(*Config) *string) codec {
	return codec{
		allowed: "empty or 1 to 249 letters, digits, '.', '_' or '-'",
		decode: func(c *Config, raw string) error {
			if raw != "" && !kafkaIDChars.MatchString(raw) {
				return errNotAllowed
			}
			*field(c) = raw
			return nil
		},
	}
}

// readableFile accepts an unset path or the path of a file this process can
// open now, so a wrong path stops start-up naming the setting rather than
// failing at the first connection. What the file holds is its user's to
// judge, as it may change while the process runs.
func readableFile(field func(*Config) *string) codec {
	return codec{
		allowed: "empty or the path of a readable file",
		decode: func(c *Config, raw string) error {
			if raw != "" {
				f, err := os.Open(raw)
				if err != nil {
					return errors.Unwrap(err) // the reason, without repeating the path
				}
				info, err := f.Stat()
				_ = f.Close()
				if err == nil && info.IsDir() {
					return errors.New("it is a directory")
				}
			}
			*field(c) = raw
			return nil
		},
	}
}

// httpURL accepts an unset value or an absolute http or https URL.
func httpURL(field func(*Config) *string) codec {
	return codec{
		allowed: "empty or an absolute http:// or https:// URL",
		decode: func(c *Config, raw string) error {
			if raw != "" {
				u, err := url.Parse(raw)
				if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					return errNotAllowed
				}
			}
			*field(c) = raw
			return nil
		},
	}
}

// publicURL accepts an absolute http(s) URL with a host and nothing a
// link's own path and query could not follow: no query, no fragment, no
// credentials.
func publicURL(field func(*Config) *string) codec {
	return codec{
		allowed: "empty or an http:// or https:// URL with a host and no query, fragment or user name, such as https://hub.example.com",
		decode: func(c *Config, raw string) error {
			if raw != "" {
				u, err := url.Parse(raw)
				if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
					u.RawQuery != "" || u.Fragment != "" || u.User != nil || u.Opaque != "" {
					return errNotAllowed
				}
				raw = strings.TrimRight(raw, "/")
			}
			*field(c) = raw
			return nil
		},
	}
}

// originList accepts web origins (scheme, host and optional port, as a
// browser compares them), comma-separated; they go into a
// Content-Security-Policy header, so nothing else may pass.
func originList(field func(*Config) *[]string) codec {
	return codec{
		allowed: "empty or a comma-separated list of origins such as https://app.example.com or https://app.example.com:8443",
		decode: func(c *Config, raw string) error {
			origins := []string{}
			for _, item := range splitList(raw) {
				if !isOrigin(item) {
					return fmt.Errorf("%q is not an origin", item)
				}
				origins = append(origins, item)
			}
			*field(c) = origins
			return nil
		},
	}
}

var originPattern = regexp.MustCompile(`^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?$`)

func isOrigin(s string) bool { return originPattern.MatchString(s) }
