// Package root assembles the hubctl command tree.
package root

import (
	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/buildinfo"
	"github.com/hubctl/hubctl/internal/cli/activity"
	"github.com/hubctl/hubctl/internal/cli/apicmd"
	"github.com/hubctl/hubctl/internal/cli/bench"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	configcmd "github.com/hubctl/hubctl/internal/cli/config"
	"github.com/hubctl/hubctl/internal/cli/contextcmd"
	"github.com/hubctl/hubctl/internal/cli/deliveries"
	"github.com/hubctl/hubctl/internal/cli/dev"
	"github.com/hubctl/hubctl/internal/cli/dlq"
	"github.com/hubctl/hubctl/internal/cli/events"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/kek"
	"github.com/hubctl/hubctl/internal/cli/listen"
	"github.com/hubctl/hubctl/internal/cli/login"
	"github.com/hubctl/hubctl/internal/cli/man"
	"github.com/hubctl/hubctl/internal/cli/migrate"
	"github.com/hubctl/hubctl/internal/cli/portal"
	"github.com/hubctl/hubctl/internal/cli/pull"
	"github.com/hubctl/hubctl/internal/cli/quarantine"
	"github.com/hubctl/hubctl/internal/cli/serve"
	"github.com/hubctl/hubctl/internal/cli/sig"
	"github.com/hubctl/hubctl/internal/cli/storage"
	"github.com/hubctl/hubctl/internal/cli/subs"
	"github.com/hubctl/hubctl/internal/cli/tenants"
	"github.com/hubctl/hubctl/internal/cli/top"
	"github.com/hubctl/hubctl/internal/cli/version"
)

// NewCmd returns the root command with every subcommand attached.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var configFile string
	var noColor bool
	cmd := &cobra.Command{
		Use:   "hubctl",
		Short: "Event streaming hub: CloudEvents from Kafka to your destinations",
		Long: `hubctl consumes CloudEvents from Kafka, keeps each event once in a PostgreSQL
inbox, matches it against per-tenant subscriptions and delivers it: signed
webhooks, AWS SQS, RabbitMQ, AWS EventBridge, or a pull cursor.

The same binary runs the hub (hubctl serve), a complete local setup
(hubctl dev) and every admin and consumer tool.

Settings come from flags, then STREAMING_HUB_* environment variables, then the
YAML file named by --config, then defaults; see hubctl config show.

Admin commands (tenants, subs, deliveries, dlq, quarantine) work in two modes
against the same store: through the API with --server and --token
(HUBCTL_SERVER, HUBCTL_TOKEN), or, without a server, directly on the
database named by --database-url (STREAMING_HUB_POSTGRES_DSN).

Exit codes: 0 ok, 1 failure or a value the hub rejected, 2 usage error,
3 not found, 4 unauthorized or forbidden, 5 hub or database unavailable.`,
		Version:       buildinfo.Get().Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if noColor {
				f.IOStreams.DisableColor()
			}
			f.UseFlags(cmd.Flags(), configFile)
			return nil
		},
	}
	cmd.SetVersionTemplate("hubctl {{.Version}}\n")
	cmd.SetOut(f.IOStreams.Out)
	cmd.SetErr(f.IOStreams.ErrOut)
	cmd.SetIn(f.IOStreams.In)

	pf := cmd.PersistentFlags()
	pf.StringVar(&configFile, "config", "", "YAML config file (keys: setting names without STREAMING_HUB_, lower case)")
	pf.String("database-url", "", "PostgreSQL connection URL (STREAMING_HUB_POSTGRES_DSN)")
	pf.String("log-level", "", "debug, info, warn or error (STREAMING_HUB_LOG_LEVEL)")
	pf.BoolVar(&noColor, "no-color", false, "no colour in output (also NO_COLOR=1)")
	pf.String(hubaccess.FlagServer, "", "hub API URL; admin commands go through the API instead of the database ("+hubaccess.EnvServer+")")
	pf.String(hubaccess.FlagToken, "", "admin token or tenant API key for --server ("+hubaccess.EnvToken+"; prefer the variable, flags show in ps)")
	cmdutil.MustBindFlag(pf, "database-url", "STREAMING_HUB_POSTGRES_DSN")
	cmdutil.MustBindFlag(pf, "log-level", "STREAMING_HUB_LOG_LEVEL")

	cmd.AddCommand(
		serve.NewCmd(f),
		dev.NewCmd(f),
		migrate.NewCmd(f),
		tenants.NewCmd(f),
		events.NewCmd(f),
		quarantine.NewCmd(f),
		storage.NewCmd(f),
		subs.NewCmd(f),
		deliveries.NewCmd(f),
		dlq.NewCmd(f),
		sig.NewCmd(f),
		listen.NewCmd(f),
		pull.NewCmd(f, nil),
		activity.NewCmd(f, nil),
		login.NewCmd(f, nil),
		contextcmd.NewCmd(f),
		configcmd.NewCmd(f),
		kek.NewCmd(f),
		top.NewCmd(f, nil),
		portal.NewCmd(f, nil),
		bench.NewCmd(f, nil),
		apicmd.NewCmd(f),
		version.NewCmd(f),
		man.NewCmd(f),
	)
	cmdutil.MarkUsageErrors(cmd)
	return cmd
}
