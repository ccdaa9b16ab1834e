// Package hubaccess is how admin commands find the hub, in either of the
// two modes of every admin command (README.md, Using it): through the HTTP
// API (--server, with pkg/client) or directly on the database
// (--database-url, with the use cases `hubctl serve` runs, as the admin).
// Either way a command gets a hubapi.ControlPlane, so every command is
// written once and behaves the same in both modes.
package hubaccess

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/hubctl/hubctl/internal/buildinfo"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/profile"
	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/crypto"
	"github.com/hubctl/hubctl/internal/hub"
	"github.com/hubctl/hubctl/pkg/client"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// Environment variables of the client side, outside the hub's STREAMING_HUB_
// settings: they say which hub to talk to, not how a hub runs.
const (
	EnvServer = "HUBCTL_SERVER"
	EnvToken  = "HUBCTL_TOKEN"
	EnvTenant = "HUBCTL_TENANT"
)

// Flag names of the same settings.
const (
	FlagServer = "server"
	FlagToken  = "token"
	FlagTenant = "tenant"
)

// Target is the hub a command talks to: a server URL (remote mode) or,
// when Server is empty, the configured database (direct mode).
type Target struct {
	Server string
	Token  string
	// Tenant is the profile's tenant, used when --tenant is not given.
	Tenant string
	// Context names the stored profile the server came from, if one did.
	Context string
	// Brokers are the profile's Kafka brokers, for the commands that
	// publish to the hub.
	Brokers []string
	// CAFile is a PEM bundle of authorities trusted for the server beside
	// the system's (hubctl login --ca-file), for a hub whose certificate a
	// private CA signed.
	CAFile string
}

// Remote reports whether commands go through the API.
func (t Target) Remote() bool { return t.Server != "" }

// Resolve reads --server and --token, falling back to HUBCTL_SERVER and
// HUBCTL_TOKEN, then to the active stored profile (hubctl login, hubctl
// dev) when no database is configured either: an operator who names a
// database means it. A profile's token is only ever sent to its own
// server. It opens nothing.
func Resolve(f *cmdutil.Factory) (Target, error) {
	target := Target{Server: f.FlagOrEnv(FlagServer, EnvServer), Token: f.FlagOrEnv(FlagToken, EnvToken)}
	if target.Server != "" {
		return target, nil
	}
	cfg, err := f.Config()
	if err != nil {
		return Target{}, err
	}
	if cfg.Postgres.DSN != "" {
		return target, nil
	}
	c, ok, err := ActiveProfile(f)
	if err != nil || !ok {
		return target, err
	}
	target.Server, target.Tenant, target.Context, target.Brokers, target.CAFile = c.Server, c.Tenant, c.Name, c.Brokers, c.CAFile
	if target.Token == "" {
		target.Token = c.Token
	}
	return target, nil
}

// ActiveProfile is the stored context commands use, if any.
func ActiveProfile(f *cmdutil.Factory) (profile.Context, bool, error) {
	path, err := profile.Path(f.LookupEnv)
	if err != nil {
		return profile.Context{}, false, nil // no profiles where none can be kept
	}
	file, err := profile.Load(path)
	if err != nil {
		return profile.Context{}, false, err
	}
	return file.Active(f.LookupEnv)
}

// TenantScope is the tenant subscription commands act on: --tenant or
// HUBCTL_TENANT. Direct mode needs one; remote mode needs one only with
// the admin token, which the server, not the CLI, recognises.
func TenantScope(f *cmdutil.Factory, target Target) (string, error) {
	tenant := f.FlagOrEnv(FlagTenant, EnvTenant)
	if tenant == "" {
		tenant = target.Tenant
	}
	if tenant == "" {
		if !target.Remote() {
			return "", cmdutil.UsageErrorf("--tenant (or %s) is required when working directly on the database: it names the tenant whose subscriptions to act on", EnvTenant)
		}
		return "", nil
	}
	return tenant, hubapi.CheckTenantID(tenant)
}

// Open connects to the target: a client of the API, or the use cases on
// the database, acting as the admin. The caller calls the function it
// returns when done.
func Open(ctx context.Context, f *cmdutil.Factory, target Target) (hubapi.ControlPlane, func(), error) {
	if target.Remote() {
		c, err := openRemote(target)
		if err != nil {
			return nil, nil, err
		}
		return c, func() {}, nil
	}
	return openDirect(ctx, f)
}

func openRemote(target Target) (*client.Client, error) {
	if target.Token == "" {
		return nil, &cmdutil.ExitError{Code: cmdutil.ExitUnauthorized,
			Err: fmt.Errorf("no token for the hub at %s: pass --token or set %s (the admin token, or a tenant API key)", target.Server, EnvToken)}
	}
	opts := []client.Option{client.WithToken(target.Token), client.WithUserAgent(buildinfo.UserAgent())}
	if target.CAFile != "" {
		hc, err := HTTPClientTrusting(target.CAFile)
		if err != nil {
			return nil, cmdutil.WithCode(cmdutil.ExitUsage, fmt.Errorf("context %q: %w", target.Context, err))
		}
		opts = append(opts, client.WithHTTPClient(hc))
	}
	c, err := client.New(target.Server, opts...)
	if err != nil {
		return nil, cmdutil.UsageErrorf("invalid --server (%s): %v", EnvServer, err)
	}
	return c, nil
}

// HTTPClientTrusting is the API client's HTTP client, trusting the
// authorities of caFile beside the system's.
func HTTPClientTrusting(caFile string) (*http.Client, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("CA file: %w", err)
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("CA file %s holds no PEM certificate", caFile)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	return &http.Client{Timeout: client.DefaultTimeout, Transport: transport}, nil
}

// openDirect assembles the use cases on the database the way `hubctl
// serve` does behind the API (hub.NewControlPlane).
func openDirect(ctx context.Context, f *cmdutil.Factory) (hubapi.ControlPlane, func(), error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, nil, err
	}
	if cfg.Postgres.DSN == "" {
		return nil, nil, errNoHub
	}
	st, err := f.Store(ctx)
	if err != nil {
		return nil, nil, err
	}
	keyring := func() (*crypto.Keyring, error) { return hub.LoadKeyring(cfg, f.LookupEnv) }
	cp := hub.NewControlPlane(cfg, st, keyring)
	return cp.As(hubapi.Admin()), func() {
		cp.Close()
		st.Close()
	}, nil
}

// errNoHub explains the ways of naming a hub when none was given.
var errNoHub = &config.SetupError{Err: errors.New("no hub configured: set " + EnvServer + " and " + EnvToken +
	" (or run hubctl login --server URL, or hubctl dev, which stores a context) to use the API, " +
	"or STREAMING_HUB_POSTGRES_DSN (--database-url) to work directly on the database")}

// requireHub refuses a command that names no hub at all before anything
// else is judged: "--tenant is required" would send the user after the
// wrong problem.
func requireHub(f *cmdutil.Factory, target Target) error {
	if target.Remote() {
		return nil
	}
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	if cfg.Postgres.DSN == "" {
		return errNoHub
	}
	return nil
}

// Run opens the running command's hub, hands it to do and closes it.
func Run(ctx context.Context, f *cmdutil.Factory, do func(hubapi.ControlPlane) error) error {
	target, err := Resolve(f)
	if err != nil {
		return err
	}
	return target.annotate(func() error {
		h, closeHub, err := Open(ctx, f, target)
		if err != nil {
			return err
		}
		defer closeHub()
		return do(h)
	}())
}

// annotate names the stored context a failure happened in: the command
// line names no hub then, and "unauthorized" or "connection refused"
// alone leaves the user guessing which hub answered.
func (t Target) annotate(err error) error {
	if err == nil || t.Context == "" {
		return err
	}
	return fmt.Errorf("%w (context %s)", err, t.Context)
}

// RunForTenant is Run for the commands that act on one tenant's resources:
// the tenant scope is checked before anything is opened, so a missing or
// malformed --tenant is refused the same way whatever the hub.
func RunForTenant(ctx context.Context, f *cmdutil.Factory, do func(h hubapi.ControlPlane, tenant string) error) error {
	target, err := Resolve(f)
	if err != nil {
		return err
	}
	if err := requireHub(f, target); err != nil {
		return err
	}
	return target.annotate(func() error {
		tenant, err := TenantScope(f, target)
		if err != nil {
			return err
		}
		h, closeHub, err := Open(ctx, f, target)
		if err != nil {
			return err
		}
		defer closeHub()
		return scopeError(tenant, do(h, tenant))
	}())
}

// scopeError turns the hub's complaint that the admin named no tenant,
// which the API gives only after accepting the admin token, into the usage
// error direct mode gives for a missing --tenant: the user's mistake is on
// the command line.
func scopeError(tenant string, err error) error {
	if tenant != "" || !missingTenant(err) {
		return err
	}
	return cmdutil.UsageErrorf("--tenant (or %s) is required with the admin token: it names the tenant whose subscriptions to act on", EnvTenant)
}

// missingTenant says whether err is the API's refusal of the admin token
// without an X-Tenant-Id.
func missingTenant(err error) bool {
	var answer *hubapi.Error
	if !errors.As(err, &answer) || answer.Code != hubapi.CodeInvalidRequest {
		return false
	}
	field, _ := answer.Details["field"].(string)
	return http.CanonicalHeaderKey(field) == http.CanonicalHeaderKey(client.HeaderTenantID)
}

// Check makes one authenticated call to the target's hub, so a context is
// stored only once its server answered and took its token. The admin
// token without a tenant is told apart by the hub asking for one, which it
// does only after accepting the token.
func Check(ctx context.Context, target Target) error {
	c, err := openRemote(target)
	if err != nil {
		return err
	}
	_, err = c.ListSubscriptions(ctx, target.Tenant, hubapi.ListParams{Limit: 1})
	if target.Tenant == "" && missingTenant(err) {
		return nil
	}
	return err
}

// Call is Run for a use case that answers with one value.
func Call[T any](ctx context.Context, f *cmdutil.Factory, do func(hubapi.ControlPlane) (T, error)) (T, error) {
	var v T
	err := Run(ctx, f, func(h hubapi.ControlPlane) (err error) {
		v, err = do(h)
		return err
	})
	return v, err
}

// CallForTenant is RunForTenant for a use case that answers with one value.
func CallForTenant[T any](ctx context.Context, f *cmdutil.Factory, do func(h hubapi.ControlPlane, tenant string) (T, error)) (T, error) {
	var v T
	err := RunForTenant(ctx, f, func(h hubapi.ControlPlane, tenant string) (err error) {
		v, err = do(h, tenant)
		return err
	})
	return v, err
}
