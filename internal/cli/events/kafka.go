package events

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/kafkaclient"
)

const (
	// pingTimeout bounds the first contact with the brokers, so a wrong
	// address fails in seconds instead of hanging on retries.
	pingTimeout = 15 * time.Second
	// deliveryTimeout bounds how long one record may wait to be acknowledged
	// once the brokers answered; past it the run fails rather than stalls.
	deliveryTimeout = time.Minute
)

// clientOptions connects to the configured cluster as a producer, with the
// same TLS and SASL/SCRAM settings the hub itself uses. Topics are created
// on first use where the broker allows it (hubctl dev's does).
func clientOptions(ctx context.Context, k config.KafkaConfig) ([]kgo.Opt, error) {
	opts, err := kafkaclient.Options(ctx, k, "hubctl-events-produce")
	if err != nil {
		return nil, err
	}
	return append(opts,
		kgo.RecordDeliveryTimeout(deliveryTimeout),
		kgo.AllowAutoTopicCreation(),
	), nil
}

// unreachable explains a failed first contact in the words of the
// settings, keeping the error for kafkaExitCode.
type unreachable struct {
	brokers string
	problem kafkaclient.Problem
	err     error
}

func newUnreachable(k config.KafkaConfig, err error) error {
	return &unreachable{brokers: strings.Join(k.Brokers, ","), problem: kafkaclient.Diagnose(k, err), err: err}
}

func (u *unreachable) Error() string {
	return "cannot reach Kafka at " + u.brokers + ": " + u.problem.String()
}

func (u *unreachable) Unwrap() error { return u.err }

// kafkaExitCode maps a failure to reach or write to Kafka onto the exit codes
// (README.md, Using it), so scripts can tell "retry later" from "fix the command".
func kafkaExitCode(err error) int {
	switch {
	case errors.Is(err, kerr.UnknownTopicOrPartition), errors.Is(err, kerr.UnknownTopicID):
		return cmdutil.ExitNotFound
	case errors.Is(err, kerr.SaslAuthenticationFailed),
		errors.Is(err, kerr.UnsupportedSaslMechanism),
		errors.Is(err, kerr.IllegalSaslState),
		errors.Is(err, kerr.TopicAuthorizationFailed),
		errors.Is(err, kerr.ClusterAuthorizationFailed):
		return cmdutil.ExitUnauthorized
	case errors.Is(err, kgo.ErrRecordTimeout),
		errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF),
		kerr.IsRetriable(err):
		return cmdutil.ExitUnavailable
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return cmdutil.ExitUnavailable
	}
	return cmdutil.ExitFailure
}
