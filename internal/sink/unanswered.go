package sink

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"
)

// DescribeUnanswered names an attempt that ended without the
// destination's answer: "no <awaited> within <timeout>" when its deadline
// passed, however that surfaced (the context, a socket deadline set from
// it that may fire a moment before the context does, a network timeout),
// "attempt cancelled" when it was cancelled. ok is false for any other
// failure, which the sink describes in its own terms.
func DescribeUnanswered(attemptCtx context.Context, err error, awaited string, timeout time.Duration) (text string, ok bool) {
	if deadline, set := attemptCtx.Deadline(); set && !time.Now().Before(deadline) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("no %s within %s", awaited, timeout), true
	}
	if netErr, isNet := errors.AsType[net.Error](err); isNet && netErr.Timeout() {
		return fmt.Sprintf("no %s within %s", awaited, timeout), true
	}
	if errors.Is(err, context.Canceled) {
		return "attempt cancelled", true
	}
	return "", false
}
