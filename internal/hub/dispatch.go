package hub

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/dispatch"
	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/internal/store"
	"github.com/hubctl/hubctl/internal/tracing"
)

// newDispatch builds the delivery half on the hub's shared subscription use
// cases (which open sinks with their decrypted secrets). Attempts in flight
// may run for the whole shutdown timeout after the hub starts stopping.
func newDispatch(cfg *config.Config, st *store.Store, subs *service.Subscriptions, log *slog.Logger, reg prometheus.Registerer, tracer *tracing.Tracing, owner string) (*dispatch.Dispatcher, error) {
	return dispatch.New(dispatch.Options{
		Queue:        st.Queue,
		Catalog:      st.Catalog,
		Lifecycle:    st.Lifecycle,
		OnCall:       st.OnCall,
		OpenSink:     subs.Sinks().Open,
		Dispatch:     cfg.Dispatch,
		Breaker:      cfg.Breaker,
		AutoDisable:  cfg.AutoDisable,
		Logger:       log,
		Registerer:   reg,
		Owner:        owner,
		Tracing:      tracer,
		DrainTimeout: cfg.ShutdownTimeout,
		TypePrefix:   cfg.Ingest.TypePrefix,
		// Operational events are kept for the topic's relay when it is on.
		RelayOperational: cfg.Kafka.OperationalTopic != "",
	})
}
