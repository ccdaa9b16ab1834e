package dispatch

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sqsapi "github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/internal/sink/registry"
	"github.com/hubctl/hubctl/internal/testutil/goawstest"
	"github.com/hubctl/hubctl/internal/testutil/rabbittest"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// sinkBenchWorkers is the dispatcher's worker count in these benchmarks:
// STREAMING_HUB_DISPATCH_WORKERS's default, as in BenchmarkDispatch.
const sinkBenchWorkers = 8

// sinkBenchEventKey is the event key insertJobs gives every event; the
// RabbitMQ queue is bound to it, the sink's default routing key.
const sinkBenchEventKey = "transaction.posted"

// BenchmarkDispatchSinks measures deliveries per second through the whole
// dispatch path (claim, open the subscription's sink with its decrypted
// credentials, one attempt, record) with 8 workers, to the two push sinks
// beside webhooks: a real RabbitMQ (persistent messages, publisher
// confirms, to a durable queue) and an in-process goaws SQS (standard
// queue). One op is one delivery, queued before the clock starts; the clock
// stops when the last one is recorded as succeeded. Run it with a fixed
// count, e.g. -benchtime=5000x.
//
// The figure is the hub's share and the destination's together: goaws runs
// in this process, so its CPU counts in go_cpu_µs/delivery; RabbitMQ's
// does not.
func BenchmarkDispatchSinks(b *testing.B) {
	b.Run("rabbitmq", func(b *testing.B) {
		broker := rabbittest.Connect(b)
		top := broker.NewTopology(b)
		top.Bind(b, sinkBenchEventKey)
		benchmarkSink(b, sinkBench{
			sink: map[string]any{"type": "rabbitmq", "url": broker.URL(), "exchange": top.Exchange},
			arrived: func() int {
				q, err := broker.Admin().QueueDeclarePassive(top.Queue, true, false, false, false, nil)
				if err != nil {
					b.Fatalf("count the queue's messages: %v", err)
				}
				return q.Messages
			},
			// A passive declare is a broker round trip; every few
			// milliseconds is plenty.
			poll: 5 * time.Millisecond,
		})
	})
	b.Run("sqs", func(b *testing.B) {
		goaws := goawstest.Start(b)
		queueURL := goaws.NewQueue(b, false)
		var mark int
		benchmarkSink(b, sinkBench{
			sink: map[string]any{
				"type": "sqs", "queue_url": queueURL, "region": goawstest.Region, "endpoint": goaws.Endpoint(),
				"access_key_id": "AKIABENCHMARK0000001", "secret_access_key": "benchmark/secret/access/key",
			},
			started: func() { mark = goaws.Mark() },
			// Only dispatch talks to goaws during the run, one request per
			// attempt; reading the count costs nothing.
			attempted: func() int { return goaws.Mark() - mark },
			arrived:   func() int { return sqsQueueLength(b, goaws, queueURL) },
			poll:      time.Millisecond,
		})
	})
}

// sinkBench is one destination of BenchmarkDispatchSinks.
type sinkBench struct {
	// sink is the subscription's sink object.
	sink map[string]any
	// started, when set, runs as the clock starts.
	started func()
	// attempted counts the attempts that reached the destination since
	// started, when it can tell them apart for free; else arrived is
	// polled during the run.
	attempted func() int
	// arrived counts the messages the destination holds.
	arrived func() int
	poll    time.Duration
}

func benchmarkSink(b *testing.B, bench sinkBench) {
	e := newEnv(b)
	sinks, err := registry.New(registry.Options{AllowPrivate: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(sinks.Close)
	subs := service.NewSubscriptions(e.store.Catalog, e.store.Queue, e.store.OnCall, e.keys, sinks.Registry, service.SubscriptionOptions{RotationOverlap: time.Hour})
	sub := benchSubscription(b, e, subs, bench.sink)
	e.insertJobs("bench", sub, b.N)

	progress := bench.attempted
	if progress == nil {
		progress = bench.arrived
	}
	b.ResetTimer()
	goBefore := processCPU(b)
	start := time.Now()
	if bench.started != nil {
		bench.started()
	}
	_, stop := e.startWith(subs, func(o *Options) {
		o.Dispatch.Workers = sinkBenchWorkers
		o.Dispatch.ClaimBatch = 16
		o.Dispatch.IdleInterval = 250 * time.Millisecond
	})
	// As in BenchmarkDispatch, the job table is counted only once the
	// destination has seen every delivery: scanning it all along would
	// compete for the database with the dispatch being timed.
	awaitCount(b, "deliveries at the destination", progress, b.N, bench.poll)
	awaitCount(b, "succeeded jobs", func() int {
		return e.count(`SELECT count(*) FROM delivery_jobs WHERE state = 'succeeded'`)
	}, b.N, time.Millisecond)
	elapsed := time.Since(start)
	goCPU := processCPU(b) - goBefore
	b.StopTimer()
	stop()

	if got := bench.arrived(); got != b.N {
		b.Fatalf("the destination holds %d messages, want %d", got, b.N)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "deliveries/s")
	b.ReportMetric(float64(goCPU.Microseconds())/float64(b.N), "go_cpu_µs/delivery")
	b.ReportMetric(0, "ns/op") // the rate is the result
}

// sinkBenchStall is how long a benchmark waits without progress before it
// gives up: far longer than any pause of a healthy run, which delivers
// thousands of messages a second, and short enough that a destination
// refusing every attempt fails the run instead of hanging it.
const sinkBenchStall = 30 * time.Second

// awaitCount polls count every poll until it reaches n, failing the
// benchmark when it stops moving for sinkBenchStall.
func awaitCount(b *testing.B, what string, count func() int, n int, poll time.Duration) {
	b.Helper()
	last, lastChange := -1, time.Now()
	for {
		got := count()
		if got >= n {
			return
		}
		if got != last {
			last, lastChange = got, time.Now()
		} else if time.Since(lastChange) > sinkBenchStall {
			b.Fatalf("%d of %d %s, and no progress for %s", got, n, what, sinkBenchStall)
		}
		time.Sleep(poll)
	}
}

// benchSubscription creates the tenant's subscription to every event with
// the sink object, verified against the destination as the API would.
func benchSubscription(b *testing.B, e *env, subs *service.Subscriptions, sinkObject map[string]any) uuid.UUID {
	b.Helper()
	e.tenant("bench")
	raw, err := json.Marshal(sinkObject)
	if err != nil {
		b.Fatal(err)
	}
	view, _, err := subs.Create(context.Background(), "bench", hubapi.SubscriptionCreate{
		Name: "bench", Sink: raw, EventTypes: []string{"*"},
	})
	if err != nil {
		b.Fatalf("create subscription: %v", err)
	}
	if view.VerificationState != "active" {
		b.Fatalf("subscription verification = %s (%s), want active", view.VerificationState, view.VerificationError)
	}
	return uuid.MustParse(view.ID)
}

// sqsQueueLength is how many messages a goaws queue holds.
func sqsQueueLength(b testing.TB, goaws *goawstest.Server, queueURL string) int {
	out, err := goaws.Client().GetQueueAttributes(context.Background(), &sqsapi.GetQueueAttributesInput{
		QueueUrl:       aws.String(queueURL),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages},
	})
	if err != nil {
		b.Fatalf("GetQueueAttributes: %v", err)
	}
	n, err := strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)])
	if err != nil {
		b.Fatalf("ApproximateNumberOfMessages %q: %v", out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)], err)
	}
	return n
}
