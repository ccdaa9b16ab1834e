package sink

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"
)

func TestDescribeUnanswered(t *testing.T) {
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	cancelled, cancelNow := context.WithCancel(context.Background())
	cancelNow()
	live := context.Background()
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		err    error
		want   string
		wantOK bool
	}{
		{"the attempt's deadline passed", expired, errors.New("read: connection reset"), "no reply within 2s", true},
		{"a deadline error from below", live, fmt.Errorf("publish: %w", context.DeadlineExceeded), "no reply within 2s", true},
		{"a network timeout", live, fmt.Errorf("dial: %w", os.ErrDeadlineExceeded), "no reply within 2s", true},
		{"cancelled", cancelled, fmt.Errorf("send: %w", context.Canceled), "attempt cancelled", true},
		{"any other failure", live, errors.New("refused"), "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := DescribeUnanswered(tc.ctx, tc.err, "reply", 2*time.Second)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("DescribeUnanswered = %q, %v; want %q, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}
