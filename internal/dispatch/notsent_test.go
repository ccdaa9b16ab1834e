package dispatch

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/internal/sink/registry"
	"github.com/hubctl/hubctl/internal/testutil/goawstest"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// An event SQS can never take (over 256 KiB) fails without a request. It
// says nothing about the queue, so it must not open the queue's breaker:
// otherwise a few oversize events would shed every healthy event of the
// tenant to that queue for a cool-down, again and again.
func TestEventsRefusedBeforeSendingLeaveTheBreakerClosed(t *testing.T) {
	e := newEnv(t)
	goaws := goawstest.Start(t)
	queueURL := goaws.NewQueue(t, false)
	sinks, err := registry.New(registry.Options{AllowPrivate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sinks.Close)
	subs := service.NewSubscriptions(e.store.Catalog, e.store.Queue, e.store.OnCall, e.keys, sinks.Registry, service.SubscriptionOptions{RotationOverlap: time.Hour})
	e.tenant("acme")
	raw, _ := json.Marshal(map[string]any{
		"type": "sqs", "queue_url": queueURL, "region": goawstest.Region, "endpoint": goaws.Endpoint(),
		"access_key_id": "AKIANOTSENT000000001", "secret_access_key": "not/sent/secret/access/key",
	})
	view, _, err := subs.Create(context.Background(), "acme", hubapi.SubscriptionCreate{Name: "q", Sink: raw, EventTypes: []string{"*"},
		// A retry of an oversize event must not come due while the test
		// counts attempts (the default curve's second step is 0–5 s).
		RetrySchedule: []string{"0s", "10h"}})
	if err != nil || view.VerificationState != "active" {
		t.Fatalf("create SQS subscription: %v (%s %s)", err, view.VerificationState, view.VerificationError)
	}
	sub := uuid.MustParse(view.ID)

	// Four oversize events, then a normal one, attempted one at a time
	// in that order by a single worker; two failures would open the
	// breaker.
	const oversize = 4
	if _, err := e.store.Pool.Exec(context.Background(), `
WITH ev AS (
    INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time,
                        header_keys, header_values, payload, topic, kafka_partition, kafka_offset)
    SELECT 'acme', gen_random_uuid(), 'transaction.posted', '1.0.0', 1, 'midaz', 'studio.lerian.transaction.posted', now(),
           '{}', '{}', CASE WHEN g <= $2 THEN convert_to(repeat('x', 300000), 'UTF8') ELSE convert_to('{"ok":true}', 'UTF8') END,
           'topic', 0, g
    FROM generate_series(1, $2 + 1) g
    RETURNING seq)
INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, next_attempt_at)
SELECT gen_random_uuid(), 'acme', $1, seq, now() FROM ev ORDER BY seq`, sub, oversize); err != nil {
		t.Fatal(err)
	}
	e.startWith(subs, func(o *Options) {
		o.Dispatch.Workers = 1
		o.Dispatch.DestinationMaxInFlight = 1
		o.Breaker.Failures = 2
		o.Breaker.Cooldown = time.Hour
	})

	waitFor(t, "the normal event to be delivered beside the oversize ones", func() bool {
		return e.jobStates(sub)["succeeded"] == 1
	})
	if n := e.count(`SELECT count(*) FROM delivery_attempts a JOIN delivery_jobs j ON j.id = a.job_id
		WHERE j.subscription_id = $1 AND a.outcome = 'failed' AND a.error LIKE 'message too large for SQS%'`, sub); n != oversize {
		t.Errorf("%d oversize attempts recorded with the size reason, want %d", n, oversize)
	}
	if got := sqsQueueLength(t, goaws, queueURL); got != 1 {
		t.Errorf("queue holds %d messages, want the normal event only", got)
	}
}
