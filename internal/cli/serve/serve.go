// Package serve implements `hubctl serve`, the daemon.
package serve

import (
	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/hub"
)

// NewCmd returns `hubctl serve`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the hub: ingest, dispatch and the HTTP API",
		Long: `Run the hub. With --role all (the default) one process consumes from Kafka,
delivers, and serves the HTTP API; --role ingest or --role delivery split the
work across processes that share one database and one consumer group.

serve refuses to start on a schema other than its own (run hubctl migrate up)
and without a key-encryption key (STREAMING_HUB_KEK_REF).

On SIGTERM /readyz answers 503 at once, ingest finishes and commits the batch
in hand, deliveries in flight finish within STREAMING_HUB_SHUTDOWN_TIMEOUT,
and the process exits 0.`,
		Example: `  STREAMING_HUB_POSTGRES_DSN=postgres://hub@db/hub \
  STREAMING_HUB_KAFKA_BROKERS=kafka-1:9092,kafka-2:9092 \
  STREAMING_HUB_KEK_REF=HUB_KEK HUB_KEK="$(cat /run/secrets/hub-kek)" \
  hubctl serve --role all`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := f.Config()
			if err != nil {
				return err
			}
			log, err := f.Logger()
			if err != nil {
				return err
			}
			return hub.Run(cmd.Context(), hub.Options{Config: cfg, LookupEnv: f.LookupEnv, Logger: log})
		},
	}
	cmd.Flags().String("role", "", "all, ingest or delivery (STREAMING_HUB_ROLE)")
	cmd.Flags().String("listen", "", "HTTP listen address (STREAMING_HUB_HTTP_LISTEN_ADDR)")
	cmdutil.MustBindFlag(cmd.Flags(), "role", "STREAMING_HUB_ROLE")
	cmdutil.MustBindFlag(cmd.Flags(), "listen", "STREAMING_HUB_HTTP_LISTEN_ADDR")
	return cmd
}
