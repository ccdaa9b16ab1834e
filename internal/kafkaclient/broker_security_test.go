package kafkaclient

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/testutil/testpki"
)

// The Kafka settings have no CA setting: with KAFKA_TLS_ENABLED the client
// verifies brokers against the system roots, so a private CA reaches it the
// way an operator would supply one, through SSL_CERT_FILE. Go reads the
// system roots once per process, hence the CA is made before any test runs
// and SSL_CERT_DIR points at it too, so that no CA installed on the machine
// takes part.
var trustedCA *testpki.CA

func TestMain(m *testing.M) {
	os.Exit(runWithTrustedCA(m))
}

func runWithTrustedCA(m *testing.M) int {
	ca, err := testpki.NewCA("hubctl kafkaclient test CA (trusted)")
	if err != nil {
		fmt.Fprintln(os.Stderr, "kafkaclient tests:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "kafkaclient-ca-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "kafkaclient tests:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, ca.CertPEM, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "kafkaclient tests:", err)
		return 1
	}
	for name, value := range map[string]string{"SSL_CERT_FILE": caFile, "SSL_CERT_DIR": dir} {
		if err := os.Setenv(name, value); err != nil {
			fmt.Fprintln(os.Stderr, "kafkaclient tests:", err)
			return 1
		}
	}
	trustedCA = ca
	return m.Run()
}

const (
	securityTopic = "lerian.streaming.kafkaclient.security"
	scramUser     = "hub-ingest"
	scramPassword = "s3cret-Pa55word-for-kafkaclient"
	wrongPassword = "n0t-the-Pa55word-for-kafkaclient"
)

// passwordMechanisms are the ones kfake itself checks.
var passwordMechanisms = []config.SASLMechanism{config.SASLPlain, config.SASLScramSHA256, config.SASLScramSHA512}

func TestPasswordMechanismsAgainstBrokerRequiringThem(t *testing.T) {
	for _, mechanism := range passwordMechanisms {
		t.Run(string(mechanism), func(t *testing.T) {
			brokers := startBroker(t, kfake.EnableSASL(), kfake.Superuser(string(mechanism), scramUser, scramPassword))

			t.Run("right credentials", func(t *testing.T) {
				roundTrip(t, kafkaSettings(t, brokers, passwordEnv(mechanism, scramPassword)))
			})
			t.Run("wrong password", func(t *testing.T) {
				k := kafkaSettings(t, brokers, passwordEnv(mechanism, wrongPassword))
				err := requireAuthenticationRefused(t, k)
				requireProblem(t, k, err, "STREAMING_HUB_KAFKA_SASL_PASSWORD")
			})
			t.Run("no SASL settings", func(t *testing.T) {
				k := kafkaSettings(t, brokers, nil)
				cl, _ := newClient(t, k)
				err := ping(t, cl)
				if err == nil {
					t.Fatal("a broker requiring SASL accepted a client without SASL settings")
				}
				requireProblem(t, k, err, "STREAMING_HUB_KAFKA_SASL_MECHANISM")
			})
		})
	}
}

// TestDeprecatedSCRAMSettingsConnect: the revision-1 settings still work.
func TestDeprecatedSCRAMSettingsConnect(t *testing.T) {
	brokers := startBroker(t, kfake.EnableSASL(), kfake.Superuser(string(config.SASLScramSHA512), scramUser, scramPassword))
	roundTrip(t, kafkaSettings(t, brokers, map[string]string{
		"KAFKA_SCRAM_MECHANISM": "SCRAM-SHA-512",
		"KAFKA_SCRAM_USERNAME":  scramUser,
		"KAFKA_SCRAM_PASSWORD":  scramPassword,
	}))
}

func TestTLSAgainstBrokerRequiringIt(t *testing.T) {
	untrustedCA := testpki.MustCA(t, "hubctl kafkaclient test CA (not trusted)")
	tlsOn := map[string]string{"KAFKA_TLS_ENABLED": "true"}

	t.Run("broker certificate from the trusted CA", func(t *testing.T) {
		brokers := startBroker(t, kfake.TLS(trustedCA.ServerConfig(t, brokerIPs())))
		roundTrip(t, kafkaSettings(t, brokers, tlsOn))
	})

	t.Run("broker certificate from a CA the client lacks", func(t *testing.T) {
		brokers := startBroker(t, kfake.TLS(untrustedCA.ServerConfig(t, brokerIPs())))
		k := kafkaSettings(t, brokers, tlsOn)
		cl, _ := newClient(t, k)
		err := ping(t, cl)
		var unknownAuthority x509.UnknownAuthorityError
		if !errors.As(err, &unknownAuthority) {
			t.Fatalf("got %v (%T); want a certificate signed by unknown authority error", err, err)
		}
		requireProblem(t, k, err, "STREAMING_HUB_KAFKA_TLS_CA_FILE")
	})

	t.Run("trusted certificate that does not name the broker address", func(t *testing.T) {
		brokers := startBroker(t, kfake.TLS(trustedCA.ServerConfig(t, []net.IP{net.ParseIP("192.0.2.1")})))
		k := kafkaSettings(t, brokers, tlsOn)
		cl, _ := newClient(t, k)
		err := ping(t, cl)
		var wrongHost x509.HostnameError
		if !errors.As(err, &wrongHost) {
			t.Fatalf("got %v (%T); want a certificate host name error", err, err)
		}
		requireProblem(t, k, err, "STREAMING_HUB_KAFKA_BROKERS")
	})

	t.Run("TLS disabled against a TLS broker", func(t *testing.T) {
		brokers := startBroker(t, kfake.TLS(trustedCA.ServerConfig(t, brokerIPs())))
		k := kafkaSettings(t, brokers, nil)
		cl, _ := newClient(t, k)
		err := ping(t, cl)
		if err == nil {
			t.Fatal("a plaintext client talked to a TLS-only broker")
		}
		requireProblem(t, k, err, "STREAMING_HUB_KAFKA_TLS_ENABLED")
	})
}

func TestPasswordMechanismsOverTLS(t *testing.T) {
	for _, mechanism := range passwordMechanisms {
		t.Run(string(mechanism), func(t *testing.T) {
			brokers := startBroker(t,
				kfake.TLS(trustedCA.ServerConfig(t, brokerIPs())),
				kfake.EnableSASL(),
				kfake.Superuser(string(mechanism), scramUser, scramPassword))
			tlsWith := func(password string) map[string]string {
				env := passwordEnv(mechanism, password)
				env["KAFKA_TLS_ENABLED"] = "true"
				return env
			}

			t.Run("right credentials", func(t *testing.T) {
				roundTrip(t, kafkaSettings(t, brokers, tlsWith(scramPassword)))
			})
			t.Run("wrong password", func(t *testing.T) {
				requireAuthenticationRefused(t, kafkaSettings(t, brokers, tlsWith(wrongPassword)))
			})
		})
	}
}

func passwordEnv(mechanism config.SASLMechanism, password string) map[string]string {
	return map[string]string{
		"KAFKA_SASL_MECHANISM": string(mechanism),
		"KAFKA_SASL_USERNAME":  scramUser,
		"KAFKA_SASL_PASSWORD":  password,
	}
}

// kafkaSettings loads the configuration through the registry from the
// documented environment variables (named without their prefix), so the
// test covers their decoding too.
func kafkaSettings(t *testing.T, brokers []string, settings map[string]string) config.KafkaConfig {
	t.Helper()
	env := map[string]string{config.EnvPrefix + "KAFKA_BROKERS": strings.Join(brokers, ",")}
	for name, value := range settings {
		env[config.EnvPrefix+name] = value
	}
	cfg, err := config.Load(config.LoadOptions{LookupEnv: func(name string) (string, bool) {
		value, ok := env[name]
		return value, ok
	}})
	if err != nil {
		t.Fatalf("load settings: %v", err)
	}
	return cfg.Kafka
}

// requireProblem checks that Diagnose names the setting to fix.
func requireProblem(t *testing.T, k config.KafkaConfig, err error, setting string) {
	t.Helper()
	problem := Diagnose(k, err)
	if !strings.Contains(problem.Setting, setting) {
		t.Fatalf("Diagnose(%v) = %q; want it to name %s", err, problem, setting)
	}
	t.Logf("diagnosed: %s", problem)
}

func startBroker(t *testing.T, opts ...kfake.Opt) []string {
	t.Helper()
	cluster, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(1, securityTopic)}, opts...)...)
	if err != nil {
		t.Fatalf("start kfake: %v", err)
	}
	t.Cleanup(cluster.Close)
	return cluster.ListenAddrs()
}

// kfake listens on 127.0.0.1 only.
func brokerIPs() []net.IP { return []net.IP{net.IPv4(127, 0, 0, 1)} }

// newClient builds a client the way the hub does, plus extra role options,
// and records what happened to each SASLAuthenticate request.
func newClient(t *testing.T, k config.KafkaConfig, extra ...kgo.Opt) (*kgo.Client, *saslRecorder) {
	t.Helper()
	opts, err := Options(t.Context(), k, "hubctl-kafkaclient-test")
	if err != nil {
		t.Fatalf("options: %v", err)
	}
	recorder := &saslRecorder{}
	cl, err := kgo.NewClient(append(append(opts, kgo.WithHooks(recorder)), extra...)...)
	if err != nil {
		t.Fatalf("new client: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl, recorder
}

// ping bounds a request that should be answered (or refused) at once; the
// bound only keeps a broken setup from hanging the test.
func ping(t *testing.T, cl *kgo.Client) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return cl.Ping(ctx)
}

// roundTrip produces a record with a client built from k and reads it back
// with another one.
func roundTrip(t *testing.T, k config.KafkaConfig) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	value := []byte(t.Name())

	producer, producerSASL := newClient(t, k)
	// Producing retries a refused connection until ctx ends; a ping first
	// reports why the client cannot connect.
	if err := ping(t, producer); err != nil {
		t.Fatalf("connect: %v", err)
	}
	if err := producer.ProduceSync(ctx, &kgo.Record{Topic: securityTopic, Value: value}).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	consumer, _ := newClient(t, k,
		kgo.ConsumeTopics(securityTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	fetches := consumer.PollRecords(ctx, 1)
	if err := ctx.Err(); err != nil {
		t.Fatalf("consume: no record before giving up: %v", err)
	}
	if errs := fetches.Errors(); len(errs) > 0 {
		t.Fatalf("consume: %v", errs[0].Err)
	}
	records := fetches.Records()
	if len(records) != 1 || string(records[0].Value) != string(value) {
		t.Fatalf("consumed %d records %v; want the one produced, %q", len(records), records, value)
	}

	authenticated, failed := producerSASL.outcomes()
	switch {
	case k.SASLMechanism == config.SASLNone && authenticated+failed != 0:
		t.Fatalf("client without SASL settings sent %d SASLAuthenticate requests", authenticated+failed)
	case k.SASLMechanism != config.SASLNone && (authenticated == 0 || failed != 0):
		t.Fatalf("SASLAuthenticate: %d answered, %d failed; want the client to have authenticated", authenticated, failed)
	}
}

// requireAuthenticationRefused checks that the client fails at the SASL
// exchange rather than anywhere else, and keeps the password out of the error.
//
// kfake drops the connection on a bad SCRAM proof instead of answering
// SASL_AUTHENTICATION_FAILED as Kafka does, so the error text itself cannot
// name the cause here; the hook tells where the client failed.
func requireAuthenticationRefused(t *testing.T, k config.KafkaConfig) error {
	t.Helper()
	cl, recorder := newClient(t, k)
	err := ping(t, cl)
	if err == nil {
		t.Fatal("broker accepted a wrong password")
	}
	if strings.Contains(err.Error(), k.SASLPassword) || strings.Contains(Diagnose(k, err).String(), k.SASLPassword) {
		t.Fatalf("error reveals the password: %v", err)
	}
	t.Logf("refused with: %v", err)
	if _, failed := recorder.outcomes(); failed == 0 {
		t.Fatalf("got %v without a failed SASLAuthenticate; want the failure at authentication", err)
	}
	return err
}

type saslRecorder struct {
	mu            sync.Mutex
	authenticated int
	failed        int
}

var _ kgo.HookBrokerE2E = (*saslRecorder)(nil)

func (r *saslRecorder) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, e2e kgo.BrokerE2E) {
	if key != int16(kmsg.SASLAuthenticate) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if e2e.Err() != nil {
		r.failed++
	} else {
		r.authenticated++
	}
}

func (r *saslRecorder) outcomes() (authenticated, failed int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.authenticated, r.failed
}
