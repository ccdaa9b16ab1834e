package event

import (
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// These checks run for every record, so they are hand loops rather than
// regular expressions; the fuzz test holds them to the rules of
// docs/concepts.md, Events, written as regular expressions.

// canonicalUUIDv7 accepts the 8-4-4-4-12 hex form with version 7 and the
// RFC 4122 variant (10xx), in either letter case, and returns it lowercase.
func canonicalUUIDv7(s string) (string, bool) {
	if len(s) != 36 {
		return "", false
	}
	upper := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return "", false
			}
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f':
		case 'A' <= c && c <= 'F':
			upper = true
		default:
			return "", false
		}
	}
	if s[14] != '7' {
		return "", false
	}
	switch s[19] {
	case '8', '9', 'a', 'b', 'A', 'B':
	default:
		return "", false
	}
	if upper {
		return strings.ToLower(s), true
	}
	return s, true
}

// parseRFC3339 parses RFC 3339's date-time: full-date "T" full-time, with an
// optional fraction of any length (truncated to nanoseconds) and a "Z" or
// ±hh:mm offset. RFC 3339 allows "t" and "z" in lowercase, and a leap second
// (see leapSecond). The result is in
// UTC, which also keeps it free of per-offset time.Location allocations.
func parseRFC3339(s string) (time.Time, bool) {
	const base = len("2006-01-02T15:04:05")
	if len(s) < base+1 {
		return time.Time{}, false
	}
	if s[4] != '-' || s[7] != '-' || s[10]|0x20 != 't' || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	year, ok1 := twoDigits(s[0:2])
	yearLow, ok2 := twoDigits(s[2:4])
	month, ok3 := twoDigits(s[5:7])
	day, ok4 := twoDigits(s[8:10])
	hour, ok5 := twoDigits(s[11:13])
	minute, ok6 := twoDigits(s[14:16])
	second, ok7 := twoDigits(s[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) {
		return time.Time{}, false
	}
	year = year*100 + yearLow
	if month < 1 || month > 12 || day < 1 || day > daysIn(month, year) || hour > 23 || minute > 59 || second > 60 {
		return time.Time{}, false
	}

	rest := s[base:]
	nanos := 0
	if rest[0] == '.' {
		end := 1
		for end < len(rest) && isDigit(rest[end]) {
			end++
		}
		if end == 1 {
			return time.Time{}, false
		}
		digits := rest[1:end]
		for i := range 9 {
			nanos *= 10
			if i < len(digits) {
				nanos += int(digits[i] - '0')
			}
		}
		rest = rest[end:]
	}

	offset := 0
	switch {
	case rest == "Z" || rest == "z":
	case len(rest) == len("+07:00") && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		hh, okH := twoDigits(rest[1:3])
		mm, okM := twoDigits(rest[4:6])
		if !okH || !okM || hh > 23 || mm > 59 {
			return time.Time{}, false
		}
		offset = (hh*60 + mm) * 60
		if rest[0] == '-' {
			offset = -offset
		}
	default:
		return time.Time{}, false
	}
	if second == 60 {
		return leapSecond(year, month, day, hour, minute, offset)
	}
	t := time.Date(year, time.Month(month), day, hour, minute, second, nanos, time.UTC)
	return t.Add(-time.Duration(offset) * time.Second), true
}

// leapSecond places second 60, which time.Time cannot hold, at the last
// nanosecond of its minute: the instant stays inside the minute it belongs
// to and in order with the seconds before it, where normalizing it to the
// next minute's :00 would make it collide with that one. RFC 3339 allows a
// leap second only at the end of a UTC day (23:59:60Z, or 15:59:60-08:00),
// so any other minute is not a time.
func leapSecond(year, month, day, hour, minute, offset int) (time.Time, bool) {
	t := time.Date(year, time.Month(month), day, hour, minute, 59, 999_999_999, time.UTC)
	t = t.Add(-time.Duration(offset) * time.Second)
	if t.Hour() != 23 || t.Minute() != 59 {
		return time.Time{}, false
	}
	return t, true
}

func twoDigits(s string) (int, bool) {
	if !isDigit(s[0]) || !isDigit(s[1]) {
		return 0, false
	}
	return int(s[0]-'0')*10 + int(s[1]-'0'), true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	default:
		return 31
	}
}

// maxSchemaMajor keeps the major inside a 32-bit signed integer: it is
// stored and compared with subscriptions' schema_major, an SQL integer.
const maxSchemaMajor = math.MaxInt32

// parseSchemaMajor accepts MAJOR[.MINOR[.PATCH]], each a non-empty run of
// digits (leading zeros allowed), and returns the major.
func parseSchemaMajor(s string) (major int, ok bool) {
	i, parts := 0, 0
	for {
		start := i
		for i < len(s) && isDigit(s[i]) {
			if parts == 0 {
				major = major*10 + int(s[i]-'0')
				if major > maxSchemaMajor {
					return 0, false
				}
			}
			i++
		}
		if i == start {
			return 0, false
		}
		parts++
		if i == len(s) {
			return major, true
		}
		if s[i] != '.' || parts == 3 {
			return 0, false
		}
		i++
	}
}

// isSegment matches [a-z0-9][a-z0-9_-]*, the form of resourcetype and
// eventtype.
func isSegment(s string) bool {
	if s == "" || !isLowerAlnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isLowerAlnum(c) && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func isLowerAlnum(c byte) bool { return 'a' <= c && c <= 'z' || isDigit(c) }

// isTenantID matches [A-Za-z0-9][A-Za-z0-9._-]{0,127}.
func isTenantID(s string) bool {
	if s == "" || len(s) > 128 || !isAlnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool { return isLowerAlnum(c) || 'A' <= c && c <= 'Z' }

// isCEString reports whether s is a CloudEvents String: valid UTF-8 without
// control characters (U+0000–U+001F, U+007F–U+009F), surrogates (invalid in
// UTF-8 anyway) or Unicode noncharacters.
func isCEString(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return false
		}
		if r <= 0x9f || isNoncharacter(r) {
			return false
		}
		i += size
	}
	return true
}

// isNoncharacter reports U+FDD0–U+FDEF and the last two code points of every
// plane (U+FFFE, U+FFFF, U+1FFFE, …).
func isNoncharacter(r rune) bool {
	return 0xfdd0 <= r && r <= 0xfdef || r&0xfffe == 0xfffe
}
