package benchmark

import (
	"fmt"
	"strconv"
	"strings"
)

// WAL is what the database server wrote to its write-ahead log during the
// measured run; nil where it could not be read. It is the whole server's
// WAL, so it is the hub's alone only on a server nothing else writes to
// (hubctl dev's own cluster). Unlike rates, it does not move with the
// machine's load: the same work writes the same records.
type WAL struct {
	Bytes            *int64   `json:"bytes"`
	BytesPerDelivery *float64 `json:"bytes_per_delivery"`
}

// ParseLSN reads a PostgreSQL log sequence number as pg_lsn prints it:
// two hexadecimal halves, "16/B374D848".
func ParseLSN(s string) (uint64, error) {
	hi, lo, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return 0, fmt.Errorf("log sequence number %q: want HI/LO in hexadecimal", s)
	}
	h, err := strconv.ParseUint(hi, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("log sequence number %q: %w", s, err)
	}
	l, err := strconv.ParseUint(lo, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("log sequence number %q: %w", s, err)
	}
	return h<<32 | l, nil
}

// WALPerDelivery is the WAL written between two log positions, in all and
// per delivery; empty when nothing was delivered or the positions went
// backwards (a different server answered).
func WALPerDelivery(before, after uint64, delivered int) WAL {
	if delivered <= 0 || after < before {
		return WAL{}
	}
	bytes := int64(after - before)
	per := float64(bytes) / float64(delivered)
	return WAL{Bytes: &bytes, BytesPerDelivery: &per}
}
