package pubsub

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	gpubsub "cloud.google.com/go/pubsub/v2"
	vkit "cloud.google.com/go/pubsub/v2/apiv1"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/hubctl/hubctl/internal/netguard"
	"github.com/hubctl/hubctl/internal/sink"
)

// client is one Pub/Sub client, shared by the sinks of one endpoint and
// key. It is built on the first attempt that needs it; a build that
// failed (a key the library refuses) is tried again on the next attempt.
type client struct {
	key               clientKey
	project           string
	serviceAccountKey string
	dialer            *netguard.Dialer

	mu     sync.Mutex
	built  *gpubsub.Client
	closed bool
}

// get returns the client, building it when no attempt has yet.
func (c *client) get(ctx context.Context) (*gpubsub.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errClosed
	}
	if c.built != nil {
		return c.built, nil
	}
	built, err := gpubsub.NewClientWithConfig(ctx, c.project, &gpubsub.ClientConfig{
		// One attempt is one publish: dispatch retries on its own
		// schedule, and a retry inside the library would outlive the
		// attempt's deadline.
		TopicAdminCallOptions: &vkit.TopicAdminCallOptions{Publish: []gax.CallOption{gax.WithRetry(func() gax.Retryer { return noRetry{} })}},
	}, c.options()...)
	if err != nil {
		if c.serviceAccountKey != "" {
			return nil, fmt.Errorf("the service-account key cannot be used: %w", err)
		}
		return nil, err
	}
	c.built = built
	return built, nil
}

// options reach the endpoint through the address policy, with the key or,
// for an emulator named without one, over plain gRPC without
// authentication, as the library does for PUBSUB_EMULATOR_HOST. The hub's
// own Google credentials (ADC) are never looked for.
func (c *client) options() []option.ClientOption {
	opts := []option.ClientOption{
		// A sink publishes one message at a time; one connection carries
		// that, where the library's default opens several per client.
		option.WithGRPCConnectionPool(1),
		option.WithGRPCDialOption(grpc.WithContextDialer(func(ctx context.Context, address string) (net.Conn, error) {
			return c.dialer.DialContext(ctx, "tcp", address)
		})),
		option.WithTelemetryDisabled(),
	}
	if c.key.endpoint != "" {
		opts = append(opts, option.WithEndpoint(c.key.endpoint))
	}
	if c.serviceAccountKey == "" {
		return append(opts,
			option.WithoutAuthentication(),
			option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())))
	}
	return append(opts, option.WithAuthCredentialsJSON(option.ServiceAccount, []byte(c.serviceAccountKey)))
}

// close closes the built client, if any; later attempts get errClosed.
func (c *client) close() {
	c.mu.Lock()
	built := c.built
	c.built, c.closed = nil, true
	c.mu.Unlock()
	if built != nil {
		_ = built.Close()
	}
}

// publisher is the library's publisher of one topic, tuned for one
// message per attempt: each message is sent as soon as it is published
// (a batch of one, no waiting for company), and a key's messages in
// order. The library's own deadline for a publish is the longest attempt
// timeout, a backstop behind the attempt's.
func publisher(c *gpubsub.Client, topic string) *gpubsub.Publisher {
	p := c.Publisher(topic)
	p.PublishSettings.CountThreshold = 1
	p.PublishSettings.DelayThreshold = time.Millisecond
	p.PublishSettings.Timeout = sink.MaxAttemptTimeout
	p.EnableMessageOrdering = true
	return p
}

// noRetry makes every call a single request.
type noRetry struct{}

func (noRetry) Retry(error) (time.Duration, bool) { return 0, false }
