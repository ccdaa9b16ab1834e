package webhook

import (
	"bytes"
	"testing"
	"time"
)

// The benchmarks model a rotation overlap: a 1 KiB body, two secrets, two
// signature lines.
var (
	benchSecrets = []string{testSecret, testOldSecret}
	benchBody    = bytes.Repeat([]byte("a"), 1024)
)

// BenchmarkSign measures what the hub does per attempt during an overlap.
func BenchmarkSign(b *testing.B) {
	b.SetBytes(int64(len(benchBody)))
	b.ReportAllocs()
	for b.Loop() {
		SignAll(benchSecrets, testTimestamp, benchBody)
	}
}

// BenchmarkVerify measures the worst accepted case for a receiver holding both
// secrets: only the last signature line matches, and only its second secret.
func BenchmarkVerify(b *testing.B) {
	signatures := []string{
		Sign("whsec_a-secret-this-receiver-never-had", testTimestamp, benchBody),
		Sign(testOldSecret, testTimestamp, benchBody),
	}
	now := time.Unix(testTimestamp, 0)
	b.SetBytes(int64(len(benchBody)))
	b.ReportAllocs()
	for b.Loop() {
		if err := Verify(benchSecrets, "1767225600", signatures, benchBody, now, DefaultTolerance); err != nil {
			b.Fatal(err)
		}
	}
}
