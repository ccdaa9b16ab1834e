package hub

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubctl/hubctl/internal/buildinfo"
	"github.com/hubctl/hubctl/internal/observe"
	"github.com/hubctl/hubctl/internal/store"
)

// heartbeat stores this instance's stats and open breakers every
// observe.HeartbeatInterval, so that `hubctl top` and `subs get` see every
// instance behind the database, and removes the instance when it stops.
type heartbeat struct {
	store    *store.Store
	gatherer prometheus.Gatherer
	instance store.Instance
	// breakers lists this process's open breakers; nil on an ingest-only
	// instance.
	breakers func() []store.BreakerState
	log      *slog.Logger
	interval time.Duration
}

func (h *heartbeat) Run(ctx context.Context) error {
	ticker := time.NewTicker(h.interval)
	defer ticker.Stop()
	failing := false
	for {
		err := h.beat(ctx)
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			failing = true
			h.log.Warn("storing the heartbeat failed; hubctl top and subs get miss this instance meanwhile", "error", err)
		case err == nil && failing:
			failing = false
			h.log.Info("storing the heartbeat works again")
		}
		select {
		case <-ctx.Done():
			leaveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			defer cancel()
			_ = h.store.Leave(leaveCtx, h.instance.Owner)
			return nil
		case <-ticker.C:
		}
	}
}

func (h *heartbeat) beat(ctx context.Context) error {
	families, err := h.gatherer.Gather()
	if err != nil {
		return err
	}
	stats, err := json.Marshal(observe.FromFamilies(families))
	if err != nil {
		return err
	}
	in := h.instance
	in.HeartbeatAt, in.Stats = time.Now(), stats
	var breakers []store.BreakerState
	if h.breakers != nil {
		breakers = h.breakers()
	}
	return h.store.Heartbeat(ctx, in, breakers, observe.StaleAfter)
}

func newHeartbeat(st *store.Store, gatherer prometheus.Gatherer, owner, role string, breakers func() []store.BreakerState, log *slog.Logger) *heartbeat {
	return &heartbeat{
		store:    st,
		gatherer: gatherer,
		instance: store.Instance{Owner: owner, Role: role, Version: buildinfo.Get().Version, StartedAt: time.Now()},
		breakers: breakers,
		log:      log.With(slog.String("component", "heartbeat")),
		interval: observe.HeartbeatInterval,
	}
}
