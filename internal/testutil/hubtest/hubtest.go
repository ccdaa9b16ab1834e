// Package hubtest starts the hub's control plane and API over a test
// database, assembled as `hubctl serve` assembles them, for tests that
// drive the hub in process and over HTTP alike.
package hubtest

import (
	"context"
	"crypto/tls"
	"net/http/httptest"
	"testing"

	"github.com/hubctl/hubctl/internal/api"
	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/crypto"
	"github.com/hubctl/hubctl/internal/hub"
	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/internal/store"
	"github.com/hubctl/hubctl/internal/store/pg"
)

// Start serves the API over the database dsn under the configuration env
// (STREAMING_HUB_* variables) and returns the control plane behind it with
// the server's URL. Both stop with the test.
func Start(t testing.TB, dsn string, env map[string]string) (*service.ControlPlane, string) {
	t.Helper()
	return start(t, dsn, env, nil)
}

// StartTLS is Start serving HTTPS with the certificate cert.
func StartTLS(t testing.TB, dsn string, env map[string]string, cert tls.Certificate) (*service.ControlPlane, string) {
	t.Helper()
	return start(t, dsn, env, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
}

func start(t testing.TB, dsn string, env map[string]string, tlsConfig *tls.Config) (*service.ControlPlane, string) {
	t.Helper()
	lookupEnv := func(name string) (string, bool) { v, ok := env[name]; return v, ok }
	cfg, err := config.Load(config.LoadOptions{LookupEnv: lookupEnv})
	if err != nil {
		t.Fatalf("configuration: %v", err)
	}
	st, err := store.Open(context.Background(), dsn, pg.Options{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(st.Close)
	keys, err := hub.LoadKeyring(cfg, lookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	// The listener comes first, so that portal links name its address.
	server := httptest.NewUnstartedServer(nil)
	if cfg.Portal.PublicURL == "" {
		scheme := "http://"
		if tlsConfig != nil {
			scheme = "https://"
		}
		cfg.Portal.PublicURL = scheme + server.Listener.Addr().String()
	}
	control := hub.NewControlPlane(cfg, st, func() (*crypto.Keyring, error) { return keys, nil })
	t.Cleanup(control.Close)
	t.Cleanup(server.Close)
	server.Config.Handler = hub.NewAPI(cfg, st, control, keys, api.Options{})
	if tlsConfig != nil {
		server.TLS = tlsConfig
		server.StartTLS()
	} else {
		server.Start()
	}
	return control, server.URL
}
