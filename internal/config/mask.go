package config

import (
	"net/url"
	"strings"
)

// masked replaces a secret wherever configuration is displayed.
const masked = "****"

// maskDSN hides the password of a PostgreSQL connection string in either of
// libpq's forms, keeping user, hosts and database visible for diagnosis.
// The string is edited in place rather than parsed and re-rendered, so
// nothing else about it changes. What it cannot parse it hides whole:
// showing too little beats leaking a password.
func maskDSN(dsn string) string {
	if schemeEnd := urlSchemeEnd(dsn); schemeEnd > 0 {
		return maskURLDSN(dsn, schemeEnd)
	}
	if out, ok := maskKeywordDSN(dsn); ok {
		return out
	}
	return masked
}

// urlSchemeEnd returns the index of "://" when dsn starts with a URL scheme,
// else 0.
func urlSchemeEnd(dsn string) int {
	end := strings.Index(dsn, "://")
	if end <= 0 {
		return 0
	}
	for i, r := range dsn[:end] {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || !(r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return 0
		}
	}
	return end
}

// maskURLDSN masks postgres://user:password@hosts/db?password=… forms.
// The password runs from the first ':' of the authority to the LAST '@':
// an unescaped '@' or '/' inside a password must not cut the mask short.
// When an '@' belongs to the query instead, this over-masks, which is safe.
func maskURLDSN(dsn string, schemeEnd int) string {
	prefix, rest := dsn[:schemeEnd+len("://")], dsn[schemeEnd+len("://"):]
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		if colon := strings.IndexByte(rest[:at], ':'); colon >= 0 {
			prefix += rest[:colon+1] + masked
			rest = rest[at:]
		}
	}
	if q := strings.IndexByte(rest, '?'); q >= 0 {
		rest = rest[:q+1] + maskQueryPassword(rest[q+1:])
	}
	return prefix + rest
}

// maskQueryPassword masks the value of every password parameter.
func maskQueryPassword(query string) string {
	params := strings.Split(query, "&")
	for i, param := range params {
		key, _, hasValue := strings.Cut(param, "=")
		if hasValue && isPasswordKey(key) {
			params[i] = key + "=" + masked
		}
	}
	return strings.Join(params, "&")
}

func isPasswordKey(key string) bool {
	if unescaped, err := url.QueryUnescape(key); err == nil {
		key = unescaped
	}
	return strings.EqualFold(strings.TrimSpace(key), "password")
}

// maskKeywordDSN masks "host=h password='p w' dbname=d" forms, following
// libpq's grammar: whitespace-separated key = value pairs, values either
// single-quoted or bare, with backslash escaping the next byte in both.
// ok is false when the string does not follow that grammar.
func maskKeywordDSN(dsn string) (out string, ok bool) {
	var b strings.Builder
	i := 0
	for {
		j := skipSpace(dsn, i)
		b.WriteString(dsn[i:j])
		if i = j; i == len(dsn) {
			return b.String(), true
		}

		keyEnd := i
		for keyEnd < len(dsn) && dsn[keyEnd] != '=' && !isSpace(dsn[keyEnd]) {
			keyEnd++
		}
		eq := skipSpace(dsn, keyEnd)
		if eq == len(dsn) || dsn[eq] != '=' {
			return "", false
		}
		valueStart := skipSpace(dsn, eq+1)
		valueEnd, ok := keywordValueEnd(dsn, valueStart)
		if !ok {
			return "", false
		}

		b.WriteString(dsn[i:valueStart])
		if isPasswordKey(dsn[i:keyEnd]) {
			b.WriteString(masked)
		} else {
			b.WriteString(dsn[valueStart:valueEnd])
		}
		i = valueEnd
	}
}

// keywordValueEnd returns where the value starting at i ends; ok is false
// for an unterminated quote.
func keywordValueEnd(s string, i int) (end int, ok bool) {
	if i < len(s) && s[i] == '\'' {
		for j := i + 1; j < len(s); j++ {
			switch s[j] {
			case '\\':
				j++
			case '\'':
				return j + 1, true
			}
		}
		return 0, false
	}
	j := i
	for j < len(s) && !isSpace(s[j]) {
		if s[j] == '\\' {
			j++
		}
		j++
	}
	return min(j, len(s)), true
}

func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// isSpace matches C's isspace, which libpq uses to separate pairs.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}
