package queue

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestListenJobsWakesOnIngest(t *testing.T) {
	st := ingestStore(t)
	addTestSubscription(t, st, "acme", "webhook", []string{"*"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := st.ListenJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close(context.Background()) }()
	writeBatch(t, st, batchOf(0, 1, accepted(t, 0, "acme", testEventID(1), []byte(`{}`))))
	if err := l.Wait(ctx); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	short, stop := context.WithTimeout(ctx, 50*time.Millisecond)
	defer stop()
	if err := l.Wait(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait with nothing new = %v, want the context's deadline", err)
	}
}
