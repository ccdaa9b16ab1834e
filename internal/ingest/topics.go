package ingest

import (
	"context"
	"regexp"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A consumer of a topic pattern joins its group only once a topic matches:
// until then there is nothing to consume, and a hub whose producers have
// not created their topics yet is working, not broken. watchForTopics asks
// the brokers for their topics while the consumer has not joined, so Ready
// can tell "nothing to join" (ready) from "cannot reach the brokers" or
// "joining" (not ready).
func (c *Consumer) watchForTopics(ctx context.Context, every time.Duration) {
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		if !c.joined.Load() {
			callCtx, cancel := context.WithTimeout(ctx, attemptTimeout)
			topics, err := listTopics(callCtx, c.client)
			cancel()
			c.nothingToJoin.Store(err == nil && !anyConsumable(topics, c.opts.Kafka.Topics, c.opts.Kafka.TopicsExclude))
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

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
