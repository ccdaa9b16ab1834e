// Package hubaccess is how admin commands reach the hub, in either of the
// two modes of every admin command (README.md, Using it): through the HTTP API (--server, with pkg/client) or
// directly on the database (--database-url, with internal/service). Both
// implement Hub, so every command is written once and behaves the same in
// both modes; the use cases behind the API are the very ones the direct
// mode calls.
package hubaccess

import (
	"context"
	"errors"
	"fmt"

	"github.com/hubctl/hubctl/internal/buildinfo"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/profile"
	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/service"
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

// Hub is every operation the admin commands perform. Subscription
// operations act on tenant; "" means the tenant of the API key in remote
// mode, and is refused in direct mode, where no key names one.
type Hub interface {
	CreateTenant(ctx context.Context, id string) (hubapi.Tenant, error)
	ListTenants(ctx context.Context, p service.ListParams) (hubapi.Page[hubapi.Tenant], error)
	GetTenant(ctx context.Context, id string) (hubapi.Tenant, error)
	SetTenantStatus(ctx context.Context, id, status string) (hubapi.Tenant, error)

	CreateAPIKey(ctx context.Context, tenantID, name string) (hubapi.CreatedAPIKey, error)
	ListAPIKeys(ctx context.Context, tenantID string, p service.ListParams) (hubapi.Page[hubapi.APIKey], error)
	RevokeAPIKey(ctx context.Context, tenantID, keyID string) (hubapi.APIKey, error)

	ListQuarantine(ctx context.Context, p service.QuarantineListParams) (hubapi.Page[hubapi.QuarantineSummary], error)
	GetQuarantined(ctx context.Context, id string) (hubapi.QuarantineItem, error)

	CreateSubscription(ctx context.Context, tenant string, in hubapi.SubscriptionCreate) (hubapi.CreatedSubscription, error)
	ListSubscriptions(ctx context.Context, tenant string, p service.ListParams) (hubapi.Page[hubapi.Subscription], error)
	GetSubscription(ctx context.Context, tenant, id string) (hubapi.Subscription, error)
	UpdateSubscription(ctx context.Context, tenant, id string, in hubapi.SubscriptionUpdate) (hubapi.UpdatedSubscription, error)
	DeleteSubscription(ctx context.Context, tenant, id string) (hubapi.SubscriptionDeleted, error)
	EnableSubscription(ctx context.Context, tenant, id string) (hubapi.Subscription, error)
	DisableSubscription(ctx context.Context, tenant, id string) (hubapi.Subscription, error)
	VerifySubscription(ctx context.Context, tenant, id string) (hubapi.Subscription, error)
	RotateSecret(ctx context.Context, tenant, id, signingSecret string) (hubapi.SecretRotation, error)

	ListDeliveries(ctx context.Context, tenant, subscriptionID string, p service.DeliveryListParams) (hubapi.Page[hubapi.Delivery], error)
	GetDelivery(ctx context.Context, tenant, id string) (hubapi.DeliveryDetail, error)

	DeadLetters
	Inbox
	Storage
	Recovery

	// ReadEvents reads a page of a pull subscription; reading is the ack.
	ReadEvents(ctx context.Context, tenant, subscriptionID string, p service.PullParams) (hubapi.PullPage, error)

	// Close releases the database pool or idle connections.
	Close()
}

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
	target.Server, target.Tenant, target.Context, target.Brokers = c.Server, c.Tenant, c.Name, c.Brokers
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
	return tenant, service.CheckTenantID(tenant)
}

// Open connects to the target: a client of the API, or the database. The
// caller closes the Hub.
func Open(ctx context.Context, f *cmdutil.Factory, target Target) (Hub, error) {
	if target.Remote() {
		return openRemote(target)
	}
	return openDirect(ctx, f)
}

func openRemote(target Target) (Hub, error) {
	if target.Token == "" {
		return nil, &cmdutil.ExitError{Code: cmdutil.ExitUnauthorized,
			Err: fmt.Errorf("no token for the hub at %s: pass --token or set %s (the admin token, or a tenant API key)", target.Server, EnvToken)}
	}
	c, err := client.New(target.Server, client.WithToken(target.Token), client.WithUserAgent(buildinfo.UserAgent()))
	if err != nil {
		return nil, cmdutil.UsageErrorf("invalid --server (%s): %v", EnvServer, err)
	}
	return &remote{client: c}, nil
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
func Run(ctx context.Context, f *cmdutil.Factory, do func(Hub) error) error {
	target, err := Resolve(f)
	if err != nil {
		return err
	}
	return target.annotate(func() error {
		h, err := Open(ctx, f, target)
		if err != nil {
			return err
		}
		defer h.Close()
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
func RunForTenant(ctx context.Context, f *cmdutil.Factory, do func(h Hub, tenant string) error) error {
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
		h, err := Open(ctx, f, target)
		if err != nil {
			return err
		}
		defer h.Close()
		return do(h, tenant)
	}())
}

// Call is Run for a use case that answers with one value.
func Call[T any](ctx context.Context, f *cmdutil.Factory, do func(Hub) (T, error)) (T, error) {
	var v T
	err := Run(ctx, f, func(h Hub) (err error) {
		v, err = do(h)
		return err
	})
	return v, err
}

// CallForTenant is RunForTenant for a use case that answers with one value.
func CallForTenant[T any](ctx context.Context, f *cmdutil.Factory, do func(h Hub, tenant string) (T, error)) (T, error) {
	var v T
	err := RunForTenant(ctx, f, func(h Hub, tenant string) (err error) {
		v, err = do(h, tenant)
		return err
	})
	return v, err
}

// ErrorCode is the hub's error code (docs/api.md, Errors) of err, the same
// in both modes: the API answer's code, or that of the use case the direct
// mode ran. "" when err carries none.
func ErrorCode(err error) string {
	var (
		apiErr        *client.Error
		invalid       *service.ValidationError
		notFound      *service.NotFoundError
		conflict      *service.ConflictError
		unprocessable *service.UnprocessableError
	)
	switch {
	case errors.As(err, &apiErr):
		return apiErr.Body.Code
	case errors.As(err, &invalid):
		return invalid.Code
	case errors.As(err, &notFound):
		return notFound.Code
	case errors.As(err, &conflict):
		return conflict.Code
	case errors.As(err, &unprocessable):
		return unprocessable.Code
	}
	return ""
}
