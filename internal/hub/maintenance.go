package hub

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubctl/hubctl/internal/buildinfo"
	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/maintenance"
	"github.com/hubctl/hubctl/internal/store"
	"github.com/hubctl/hubctl/internal/store/oncall"
)

// newMaintenance builds the runner of this role's maintenance services
// (maintenance.Services). dispatcher is this process's dispatcher when it
// delivers, nil otherwise. The heartbeat names the process owner, as its
// leases and breakers do.
func newMaintenance(cfg *config.Config, st *store.Store, log *slog.Logger, reg prometheus.Registerer, gatherer prometheus.Gatherer, owner string, dispatcher maintenance.Dispatcher) (*maintenance.Runner, error) {
	services, err := maintenance.Services(maintenance.Options{
		Role:       cfg.Role,
		Queue:      st.Queue,
		Lifecycle:  st.Lifecycle,
		OnCall:     st.OnCall,
		Logger:     log,
		Registerer: reg,
		Gatherer:   gatherer,
		Instance: oncall.Instance{Owner: owner, Role: string(cfg.Role), Version: buildinfo.Get().Version,
			StartedAt: time.Now()},
		Dispatcher:        dispatcher,
		PoisonThreshold:   cfg.Dispatch.PoisonThreshold,
		TenantLimit:       cfg.MetricsTenantLimit,
		Retention:         retentionPolicy(cfg),
		RetentionInterval: cfg.Retention.Interval,
	})
	if err != nil {
		return nil, err
	}
	return maintenance.NewRunner(maintenance.RunnerOptions{Lifecycle: st.Lifecycle, Logger: log, Registerer: reg}, services)
}
