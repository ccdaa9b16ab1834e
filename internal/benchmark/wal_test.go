package benchmark

import "testing"

func TestParseLSN(t *testing.T) {
	tests := []struct {
		in      string
		want    uint64
		wantErr bool
	}{
		{in: "0/0", want: 0},
		{in: "0/22098C8", want: 0x22098C8},
		{in: "16/B374D848", want: 0x16<<32 | 0xB374D848},
		{in: " 1/0\n", want: 1 << 32},
		{in: "FFFFFFFF/FFFFFFFF", want: 1<<64 - 1},
		{in: "", wantErr: true},
		{in: "22098C8", wantErr: true},
		{in: "0/x", wantErr: true},
		{in: "100000000/0", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseLSN(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseLSN(%q) = %#x, %v; want %#x, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestWALPerDelivery(t *testing.T) {
	w := WALPerDelivery(1000, 74_536_000, 20000)
	if w.Bytes == nil || *w.Bytes != 74_535_000 || w.BytesPerDelivery == nil || *w.BytesPerDelivery != 3726.75 {
		t.Fatalf("WALPerDelivery = %+v", w)
	}
	for _, tt := range []struct {
		before, after uint64
		delivered     int
	}{{10, 20, 0}, {20, 10, 5}} {
		if w := WALPerDelivery(tt.before, tt.after, tt.delivered); w.Bytes != nil || w.BytesPerDelivery != nil {
			t.Errorf("WALPerDelivery(%d, %d, %d) = %+v, want empty", tt.before, tt.after, tt.delivered, w)
		}
	}
}
