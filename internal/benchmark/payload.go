package benchmark

import (
	"bytes"
	"strconv"
	"strings"
	"time"
)

// payloadPrefix starts every bench event's data, so the receiver finds the
// produce time without decoding the JSON.
const payloadPrefix = `{"bench_sent_ns":`

// MinPayloadBytes is the smallest payload: the send time and an empty pad.
var MinPayloadBytes = len(Payload(0, time.Unix(0, 0).Add(1<<62)))

// Payload is a JSON object of size bytes (at least MinPayloadBytes)
// carrying sent, the produce time, as Unix nanoseconds, padded with "x".
func Payload(size int, sent time.Time) []byte {
	head := payloadPrefix + strconv.FormatInt(sent.UnixNano(), 10) + `,"pad":"`
	const tail = `"}`
	pad := max(size-len(head)-len(tail), 0)
	return []byte(head + strings.Repeat("x", pad) + tail)
}

// SentAt reads the produce time Payload put in body.
func SentAt(body []byte) (time.Time, bool) {
	rest, ok := bytes.CutPrefix(body, []byte(payloadPrefix))
	if !ok {
		return time.Time{}, false
	}
	end := bytes.IndexByte(rest, ',')
	if end < 0 {
		return time.Time{}, false
	}
	ns, err := strconv.ParseInt(string(rest[:end]), 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, ns), true
}
