package ingest

import (
	"context"
	"log/slog"
	"regexp"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/hubctl/hubctl/internal/kafkaclient"
)

// A consumer of a topic pattern joins its group only once a topic matches:
// until then there is nothing to consume, and a hub whose producers have
// not created their topics yet is working, not broken. watchBrokers asks
// the brokers for their topics while the consumer has not joined, so Ready
// can tell "nothing to join" (ready) from "cannot use the brokers" or
// "joining" (not ready), and so a wrong credential, certificate or
// address is said once, in the words of the settings, rather than lost
// among the client's retries.
func (c *Consumer) watchBrokers(ctx context.Context, every time.Duration) {
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		if c.joined.Load() {
			c.observeBrokers(nil)
		} else {
			callCtx, cancel := context.WithTimeout(ctx, attemptTimeout)
			topics, err := listTopics(callCtx, c.client)
			cancel()
			c.nothingToJoin.Store(err == nil && !anyConsumable(topics, c.opts.Kafka.Topics, c.opts.Kafka.TopicsExclude))
			if ctx.Err() == nil {
				c.observeBrokers(err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// observeBrokers records the outcome of a request to the brokers, logging
// a problem when it starts or changes and once more when it ends.
func (c *Consumer) observeBrokers(err error) {
	var problem *kafkaclient.Problem
	if err != nil {
		diagnosed := kafkaclient.Diagnose(c.opts.Kafka, err)
		problem = &diagnosed
	}
	previous := c.brokerProblem.Swap(problem)
	switch {
	case problem != nil && (previous == nil || *previous != *problem):
		c.log.Error("ingest cannot use the Kafka brokers", slog.String("cause", problem.Cause), slog.String("setting", problem.Setting))
	case problem == nil && previous != nil:
		c.log.Info("ingest reaches the Kafka brokers again")
	}
}

// BrokerProblem is why the brokers could not be used at the last look, or
// nil when they could.
func (c *Consumer) BrokerProblem() *kafkaclient.Problem { return c.brokerProblem.Load() }

// anyConsumable reports whether any of topics is one the consumer would
// subscribe to: matched by the pattern and not by the exclusion.
func anyConsumable(topics []string, include, exclude *regexp.Regexp) bool {
	for _, t := range topics {
		if include.MatchString(t) && (exclude == nil || !exclude.MatchString(t)) {
			return true
		}
	}
	return false
}

// listTopics is the names of the cluster's topics, internal ones left out.
func listTopics(ctx context.Context, cl *kgo.Client) ([]string, error) {
	req := kmsg.NewPtrMetadataRequest() // no topics named: all of them
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(resp.Topics))
	for _, t := range resp.Topics {
		if t.Topic != nil && !t.IsInternal {
			names = append(names, *t.Topic)
		}
	}
	return names, nil
}
