package event

import (
	"bytes"
	"testing"
)

// benchmarkRecord is a typical platform record: the required attributes plus
// a content type and trace context, all as ce- headers, and 1 KiB of JSON.
func benchmarkRecord() ([]Header, []byte) {
	headers := add(validRecord(),
		"ce-datacontenttype", "application/json",
		"ce-traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
	)
	value := []byte(`{"amount":1000,"memo":"` + string(bytes.Repeat([]byte("x"), 1024-len(`{"amount":1000,"memo":""}`))) + `"}`)
	return headers, value
}

func BenchmarkParse(b *testing.B) {
	headers, value := benchmarkRecord()
	if _, v, ok := Parse(headers, value, Options{}); !ok {
		b.Fatalf("benchmark record rejected: %s", v)
	}
	b.SetBytes(int64(len(value)))
	b.ReportAllocs()
	for b.Loop() {
		Parse(headers, value, Options{})
	}
}
