package hub

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/ingest"
	"github.com/hubctl/hubctl/internal/store"
	"github.com/hubctl/hubctl/internal/store/queue"
	"github.com/hubctl/hubctl/internal/tracing"
)

// newIngest builds the Kafka consumer. It may keep storing the batch in hand
// for the whole shutdown timeout after the hub starts stopping.
//
// handoff is this process's dispatcher when it runs one (nil otherwise):
// ingest leases it the first attempts of the jobs it writes while it has
// room (queue.Handoff).
func newIngest(cfg *config.Config, st *store.Store, log *slog.Logger, reg prometheus.Registerer, tracer *tracing.Tracing, handoff queue.Handoff) (*ingest.Consumer, error) {
	return ingest.New(ingest.Options{
		Kafka:        cfg.Kafka,
		Ingest:       cfg.Ingest,
		Queue:        st.Queue,
		Catalog:      st.Catalog,
		Logger:       log,
		Registerer:   reg,
		DrainTimeout: cfg.ShutdownTimeout,
		Tracing:      tracer,
		Handoff:      handoff,
	})
}
