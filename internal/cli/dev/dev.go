// Package dev implements `hubctl dev`: the whole hub on one machine with no
// setup — an embedded Kafka broker, a private PostgreSQL cluster, and the hub.
package dev

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/profile"
	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/devenv"
	"github.com/hubctl/hubctl/internal/hub"
	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/internal/store"
	"github.com/hubctl/hubctl/internal/store/pg"
	portalstore "github.com/hubctl/hubctl/internal/store/portal"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// DefaultTenant is seeded so a developer can produce events at once.
const DefaultTenant = "default"

type options struct {
	dataDir      string
	fresh        bool
	kafkaPort    int
	postgresPort int
}

// NewCmd returns `hubctl dev`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var opts options
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run the hub locally on embedded Kafka and a throwaway PostgreSQL",
		Long: `Run everything a developer needs on this machine: an embedded Kafka broker
(franz-go's kfake, topics created on first use), a private PostgreSQL cluster
started from the local binaries, and the hub itself with tenant "default".

State — the database, Kafka's topics and offsets, the development
key-encryption key — lives under --data-dir and survives restarts; --fresh
wipes it first. Ctrl-C stops everything.

Dev mode sets STREAMING_HUB_ENV=local and STREAMING_HUB_ALLOW_PRIVATE_SINKS=true
so webhooks on localhost work, and STREAMING_HUB_KAFKA_INSTANCE_ID=hubctl-dev so
a restart takes its Kafka partitions back at once; other settings apply as
usual. A port that is taken (by another hubctl dev, say) stops it before it
starts anything, naming the flag that moves it.

Once running, it stores the hub in the profile file (hubctl context list) as
a context holding the API address, the tenant key of "default", the tenant
and the Kafka brokers, so other terminals need no setup: hubctl subs and the
other API commands reach the hub through it, and hubctl events produce,
events trigger and bench publish to its brokers as tenant "default" without
--brokers or --tenant. The context is "dev" for the default --kafka-port and
--data-dir, and "dev-PORT" for any other instance, PORT being its Kafka
port (with --kafka-port 0, the one picked), so a second hubctl dev never
repoints the first one's. It becomes the current context unless another one is; the
banner names it either way.`,
		Example: `  hubctl dev
  hubctl dev --fresh --kafka-port 29092 --postgres-port 25432 --listen 127.0.0.1:28080 --data-dir /tmp/hub2   # context dev-29092
  psql "$(hubctl dev ... prints the URL)"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return run(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().StringVar(&opts.dataDir, "data-dir", defaultDataDir(), "where the database, Kafka data and dev key are kept")
	cmd.Flags().BoolVar(&opts.fresh, "fresh", false, "wipe --data-dir before starting")
	cmd.Flags().IntVar(&opts.kafkaPort, "kafka-port", DefaultKafkaPort, "Kafka broker port on 127.0.0.1")
	cmd.Flags().IntVar(&opts.postgresPort, "postgres-port", 15432, "PostgreSQL port on 127.0.0.1")
	cmd.Flags().String("listen", "", "HTTP API address (STREAMING_HUB_HTTP_LISTEN_ADDR; dev default 127.0.0.1:8080)")
	cmdutil.MustBindFlag(cmd.Flags(), "listen", "STREAMING_HUB_HTTP_LISTEN_ADDR")
	return cmd
}

// defaultDataDir is the per-user state directory. PostgreSQL refuses to run
// as root and runs as the postgres user instead, which cannot enter /root, so
// root's state goes where that user can reach it.
func defaultDataDir() string {
	if os.Geteuid() == 0 {
		return "/var/lib/hubctl/dev"
	}
	if dir := os.Getenv("XDG_STATE_HOME"); dir != "" {
		return filepath.Join(dir, "hubctl", "dev")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "hubctl", "dev")
	}
	return filepath.Join(os.TempDir(), "hubctl-dev")
}

func run(ctx context.Context, f *cmdutil.Factory, opts options) error {
	errOut := f.IOStreams.ErrOut
	ports := []busyPort{
		{service: "PostgreSQL", port: opts.postgresPort, flag: "--postgres-port"},
		{service: "Kafka", port: opts.kafkaPort, flag: "--kafka-port"},
	}
	if err := checkPorts(ports...); err != nil {
		return err
	}
	if opts.fresh {
		if err := os.RemoveAll(opts.dataDir); err != nil {
			return fmt.Errorf("wipe %s: %w", opts.dataDir, err)
		}
	}
	if err := os.MkdirAll(opts.dataDir, 0o755); err != nil {
		return fmt.Errorf("create --data-dir: %w", err)
	}
	kek, err := keptSecret(filepath.Join(opts.dataDir, "dev-kek"), randomBase64)
	if err != nil {
		return err
	}
	adminToken, err := keptSecret(filepath.Join(opts.dataDir, "dev-admin-token"), func() (string, error) {
		key, err := randomBase64()
		return "dev-admin-" + key, err
	})
	if err != nil {
		return err
	}

	f.Defaults = map[string]string{
		"STREAMING_HUB_ENV":                    "local",
		"STREAMING_HUB_ALLOW_PRIVATE_SINKS":    "true",
		"STREAMING_HUB_DEV_KEK":                kek,
		"STREAMING_HUB_KAFKA_METADATA_REFRESH": "2s",
		"STREAMING_HUB_LOG_LEVEL":              "info",
		"STREAMING_HUB_HTTP_LISTEN_ADDR":       "127.0.0.1:8080",
		"STREAMING_HUB_ADMIN_TOKEN":            adminToken,
		// The embedded broker's group has only this member: as a static
		// one, a restart of dev mode takes its partitions back at once.
		"STREAMING_HUB_KAFKA_INSTANCE_ID": "hubctl-dev",
	}
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	log, err := f.Logger()
	if err != nil {
		return err
	}
	if err := checkListen(cfg.HTTPListenAddr); err != nil {
		return err
	}

	started := time.Now()
	postgres, err := devenv.StartPostgres(ctx, devenv.PostgresOptions{
		DataDir: filepath.Join(opts.dataDir, "postgres"),
		Port:    opts.postgresPort,
	})
	if err != nil {
		if busy := portError(err, ports...); busy != nil {
			return busy
		}
		return fmt.Errorf("start PostgreSQL: %w", err)
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := postgres.Stop(stopCtx); err != nil {
			fmt.Fprintf(errOut, "stop PostgreSQL: %v\n", err)
		}
	}()
	kafka, err := devenv.StartKafka(devenv.KafkaOptions{
		Port:             opts.kafkaPort,
		DataDir:          filepath.Join(opts.dataDir, "kafka"),
		AutoCreateTopics: true,
	})
	if err != nil {
		if busy := portError(err, ports...); busy != nil {
			return busy
		}
		return fmt.Errorf("start Kafka on port %d: %w", opts.kafkaPort, err)
	}
	defer kafka.Close()

	if err := pg.MigrateUp(ctx, postgres.DSN()); err != nil {
		return err
	}
	tenantKey, err := seedTenant(ctx, postgres.DSN(), filepath.Join(opts.dataDir, "dev-tenant-key"))
	if err != nil {
		return err
	}

	// The embedded services are dev mode's own: a DSN or brokers exported
	// for another setup must not send it elsewhere.
	cfg.Postgres.DSN = postgres.DSN()
	cfg.Kafka.Brokers = kafka.Brokers()

	// PostgreSQL dying under the hub ends dev mode rather than leaving a
	// hub that can only report errors.
	hubCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-postgres.Done():
			cancel(errors.New("PostgreSQL exited"))
		case <-hubCtx.Done():
		}
	}()
	brokers := kafka.Brokers()
	name, err := contextName(opts.kafkaPort, brokers, opts.dataDir, defaultDataDir())
	if err != nil {
		return err
	}
	err = hub.Run(hubCtx, hub.Options{
		Config:    cfg,
		LookupEnv: f.LookupEnv,
		Logger:    log,
		OnListening: func(addr net.Addr) {
			api := "http://" + dialable(addr)
			contextNote := storeDevContext(f, profile.Context{
				Name: name, Server: api, Token: tenantKey, Tenant: DefaultTenant, Brokers: brokers,
			})
			portalLine := devPortalLink(ctx, cfg, postgres.DSN(), api)
			printBanner(errOut, banner{
				portal:     portalLine,
				context:    contextNote,
				brokers:    strings.Join(brokers, ","),
				dsn:        postgres.DSN(),
				api:        api,
				dataDir:    opts.dataDir,
				tenant:     DefaultTenant,
				adminToken: cfg.AdminToken,
				tenantKey:  tenantKey,
				duration:   time.Since(started),
			})
		},
	})
	if cause := context.Cause(hubCtx); err == nil && cause != nil && !errors.Is(cause, context.Canceled) {
		err = cause
	}
	if busy := listenError(err, cfg.HTTPListenAddr); busy != nil {
		return busy // taken since checkListen looked
	}
	return err
}

// keptSecret returns the development secret kept in path, creating it with
// make on first use, so a restart reuses the KEK (stored secrets still
// decrypt) and the printed tokens stay valid.
func keptSecret(path string, make func() (string, error)) (string, error) {
	if b, err := os.ReadFile(path); err == nil {
		return strings.TrimSpace(string(b)), nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	secret, err := make()
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return secret, nil
}

func randomBase64() (string, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(key), nil
}

// seedTenant makes sure tenant default exists and has an API key. A key is
// shown only once, so dev mode keeps the one it issued under the data dir.
func seedTenant(ctx context.Context, dsn, keyPath string) (string, error) {
	st, err := store.Open(ctx, dsn, pg.Options{MaxConns: 2, AppName: "hubctl dev"})
	if err != nil {
		return "", err
	}
	defer st.Close()
	if _, err := service.NewTenants(st.Catalog, st.Lifecycle, time.Now).Create(ctx, DefaultTenant); err != nil && !errors.Is(err, pg.ErrConflict) {
		return "", fmt.Errorf("seed tenant %q: %w", DefaultTenant, err)
	}
	return keptSecret(keyPath, func() (string, error) {
		key, err := service.NewAPIKeys(st.Catalog, time.Now).Create(ctx, DefaultTenant, "hubctl dev")
		if err != nil {
			return "", fmt.Errorf("issue an API key for tenant %q: %w", DefaultTenant, err)
		}
		return key.Key, nil
	})
}

// dialable turns a wildcard listen address into one a client can dial.
func dialable(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return addr.String()
	}
	return net.JoinHostPort("127.0.0.1", fmt.Sprint(tcp.Port))
}

type banner struct {
	brokers, dsn, api, dataDir, tenant, adminToken, tenantKey, context, portal string
	duration                                                                   time.Duration
}

// devPortalTTL is how long the banner's portal link lasts: a working day.
const devPortalTTL = "24h"

// devPortalLink signs tenant default into the portal at api, for the
// banner: the link, or why there is none. It is single-use, so the line
// says how to get another.
func devPortalLink(ctx context.Context, cfg *config.Config, dsn, api string) string {
	if !cfg.Portal.Enabled {
		return "off (STREAMING_HUB_PORTAL_ENABLED=false)"
	}
	st, err := store.Open(ctx, dsn, pg.Options{MaxConns: 1, AppName: "hubctl dev"})
	if err != nil {
		return "no link: " + err.Error()
	}
	defer st.Close()
	base := cfg.Portal.PublicURL
	if base == "" {
		base = api
	}
	portal := service.NewPortal(portalstore.New(st.Pool), time.Now, service.PortalOptions{Enabled: true, BaseURL: base})
	link, err := portal.CreateLink(ctx, DefaultTenant, hubapi.PortalLinkCreate{TTL: devPortalTTL})
	if err != nil {
		return "no link: " + err.Error()
	}
	return link.URL + "\n                  (tenant " + DefaultTenant + ", single use, " + devPortalTTL + "; another: hubctl portal)"
}

func printBanner(w io.Writer, b banner) {
	fmt.Fprintf(w, `
hubctl dev is running (started in %s)

  Kafka brokers   %s
  PostgreSQL      %s
  HTTP API        %s
  tenant          %s
  data            %s
  portal          %[10]s

%[9]s
Talk to it as tenant %[5]s (or as admin with HUBCTL_TOKEN=%[7]s); in a shell
without the context (or to override it):
  export HUBCTL_SERVER=%[4]s HUBCTL_TOKEN=%[8]s
  hubctl subs create --name demo --type pull
  hubctl events produce --brokers %[2]s --tenant %[5]s --type transaction.posted --data '{"amount":1000}'
  psql '%[3]s' -c 'select seq, tenant_id, event_key from events'

Directly on the database, the commands need dev's key-encryption key too:
  STREAMING_HUB_POSTGRES_DSN='%[3]s' STREAMING_HUB_DEV_KEK="$(cat %[6]s/dev-kek)" hubctl subs list --tenant %[5]s

Ctrl-C stops everything.

`, b.duration.Round(time.Millisecond), b.brokers, b.dsn, b.api, b.tenant, b.dataDir, b.adminToken, b.tenantKey, b.context, b.portal)
}

// DefaultKafkaPort is dev's broker port on 127.0.0.1 unless --kafka-port
// moves it.
const DefaultKafkaPort = 19092

// DevContext is the name of the context of the dev instance on the default
// Kafka port and data directory.
const DevContext = "dev"

// contextName names the context of a dev instance after what sets it apart
// and stays the same across its restarts: "dev" on the default Kafka port
// and data directory, else "dev-<kafka port>". Two instances running at once
// cannot share a Kafka port, so they never share a context. Port 0 picks a
// free port at every start, whose number is then the only name there is.
func contextName(kafkaPort int, brokers []string, dataDir, defaultDataDir string) (string, error) {
	if kafkaPort == DefaultKafkaPort && sameDir(dataDir, defaultDataDir) {
		return DevContext, nil
	}
	if kafkaPort == 0 {
		if len(brokers) == 0 {
			return "", errors.New("name the dev context: the embedded Kafka broker has no address")
		}
		_, port, err := net.SplitHostPort(brokers[0])
		if err != nil {
			return "", fmt.Errorf("name the dev context: broker address %q: %w", brokers[0], err)
		}
		return DevContext + "-" + port, nil
	}
	return fmt.Sprintf("%s-%d", DevContext, kafkaPort), nil
}

// sameDir reports whether a and b name the same directory as written,
// after cleaning and making them absolute (neither needs to exist yet).
func sameDir(a, b string) bool {
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	if errA != nil || errB != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return absA == absB
}

// storeDevContext stores the running hub as context c, so a new terminal
// reaches it with no export, and says so for the banner. It makes c current
// unless another context is: switching a developer's current hub behind
// their back would send their next command elsewhere.
func storeDevContext(f *cmdutil.Factory, c profile.Context) string {
	path, err := profile.Path(f.LookupEnv)
	if err != nil {
		return "Context not stored: " + err.Error() + "."
	}
	file, err := profile.Load(path)
	if err == nil {
		file.Set(c)
		switchTo := file.Current == "" || file.Current == c.Name
		if switchTo {
			file.Current = c.Name
		}
		if err = file.Save(path); err == nil {
			if switchTo {
				return fmt.Sprintf("Context %q is current (stored in %s): other terminals need no export,\nand hubctl events produce and trigger publish to its brokers as tenant %s.", c.Name, path, c.Tenant)
			}
			return fmt.Sprintf("Context %q stored (in %s), but %q stays current; switch with:\n  hubctl context use %s", c.Name, path, file.Current, c.Name)
		}
	}
	return "Context not stored: " + err.Error() + "."
}
