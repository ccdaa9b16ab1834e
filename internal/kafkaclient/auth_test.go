package kafkaclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/testutil/testpki"
)

// TestPrivateCAFileIsReadAgain: a CA file that does not sign the brokers'
// certificate is refused naming the setting, and once the file is fixed
// the same client connects, without a restart.
func TestPrivateCAFileIsReadAgain(t *testing.T) {
	privateCA := testpki.MustCA(t, "hubctl kafkaclient private CA")
	brokers := startBroker(t, kfake.TLS(privateCA.ServerConfig(t, brokerIPs())))
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	testpki.WriteFile(t, caFile, trustedCA.CertPEM) // the system's CA, not the brokers'
	k := kafkaSettings(t, brokers, map[string]string{"KAFKA_TLS_CA_FILE": caFile})
	if !k.TLSEnabled {
		t.Fatal("a CA file did not turn TLS on")
	}
	cl, _ := newClient(t, k)
	err := ping(t, cl)
	if err == nil {
		t.Fatal("brokers signed by another CA were trusted")
	}
	requireProblem(t, k, err, "STREAMING_HUB_KAFKA_TLS_CA_FILE")

	testpki.WriteFile(t, caFile, privateCA.CertPEM)
	if err := ping(t, cl); err != nil {
		t.Fatalf("after the CA file was fixed: %v", err)
	}
}

// TestClientCertificates: brokers that require a client certificate refuse
// a client without one, naming the setting; accept one the CA issued; and
// see a renewed certificate on the next connection without a restart.
func TestClientCertificates(t *testing.T) {
	server := trustedCA.ServerConfig(t, brokerIPs())
	server.ClientAuth = tls.RequireAndVerifyClientCert
	server.ClientCAs = trustedCA.Pool()
	var seenMu sync.Mutex
	var seenSerials []string
	server.VerifyConnection = func(cs tls.ConnectionState) error {
		seenMu.Lock()
		defer seenMu.Unlock()
		if len(cs.PeerCertificates) > 0 {
			seenSerials = append(seenSerials, cs.PeerCertificates[0].SerialNumber.String())
		}
		return nil
	}
	brokers := startBroker(t, kfake.TLS(server))

	t.Run("no client certificate", func(t *testing.T) {
		k := kafkaSettings(t, brokers, map[string]string{"KAFKA_TLS_ENABLED": "true"})
		cl, _ := newClient(t, k)
		err := ping(t, cl)
		if err == nil {
			t.Fatal("brokers requiring a client certificate accepted a client without one")
		}
		requireProblem(t, k, err, "STREAMING_HUB_KAFKA_TLS_CERT_FILE")
	})

	t.Run("certificate issued by the brokers' client CA, renewed on disk", func(t *testing.T) {
		dir := t.TempDir()
		certFile, keyFile := filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key")
		trustedCA.Client(t, "hub-ingest").Write(t, certFile, keyFile)
		k := kafkaSettings(t, brokers, map[string]string{"KAFKA_TLS_CERT_FILE": certFile, "KAFKA_TLS_KEY_FILE": keyFile})
		roundTrip(t, k)

		renewed := trustedCA.Client(t, "hub-ingest")
		renewed.Write(t, certFile, keyFile)
		cl, _ := newClient(t, k)
		if err := ping(t, cl); err != nil {
			t.Fatalf("with the renewed certificate: %v", err)
		}
		seenMu.Lock()
		defer seenMu.Unlock()
		if len(seenSerials) == 0 || seenSerials[len(seenSerials)-1] != renewed.Serial {
			t.Fatalf("the brokers last saw certificate %v, want the renewed %s", seenSerials, renewed.Serial)
		}
	})
}

// TestOAuthBearer: the client fetches a token by the client-credentials
// flow, presents it to the brokers, reuses it while it is fresh and
// fetches another before it expires; a refused client secret is diagnosed
// as such and never shown.
func TestOAuthBearer(t *testing.T) {
	const clientID, clientSecret = "hub-ingest", "oauth-Client-Secret-for-kafkaclient"
	idp := newTokenEndpoint(t, clientID, clientSecret)
	cluster, brokers := startOAuthBroker(t, idp)
	settings := func(secret string) map[string]string {
		return map[string]string{
			"KAFKA_SASL_MECHANISM":      "OAUTHBEARER",
			"KAFKA_OAUTH_TOKEN_URL":     idp.url,
			"KAFKA_OAUTH_CLIENT_ID":     clientID,
			"KAFKA_OAUTH_CLIENT_SECRET": secret,
			"KAFKA_OAUTH_SCOPE":         "kafka.read kafka.write",
		}
	}

	t.Run("a fresh token is reused", func(t *testing.T) {
		idp.setLifetime(time.Hour)
		before := idp.issuedCount()
		roundTrip(t, kafkaSettings(t, brokers, settings(clientSecret)))
		// roundTrip builds two clients, each with its own token source.
		if got := idp.issuedCount() - before; got != 2 {
			t.Fatalf("%d tokens fetched for two clients, want one each", got)
		}
		if scope := idp.lastScope(); scope != "kafka.read kafka.write" {
			t.Fatalf("asked for scope %q", scope)
		}
	})

	t.Run("a token about to expire is replaced before it is presented", func(t *testing.T) {
		idp.setLifetime(5 * time.Second) // inside the refresh margin
		k := kafkaSettings(t, brokers, settings(clientSecret))
		cl, _ := newClient(t, k)
		before := len(cluster.presented())
		if err := ping(t, cl); err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(t.Context(), &kgo.Record{Topic: securityTopic, Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		presented := cluster.presented()[before:]
		if len(presented) < 2 || presented[0] == presented[len(presented)-1] {
			t.Fatalf("tokens presented per connection: %v; want a new one each time", presented)
		}
	})

	t.Run("wrong client secret", func(t *testing.T) {
		k := kafkaSettings(t, brokers, settings("not-the-secret"))
		cl, _ := newClient(t, k)
		err := ping(t, cl)
		if err == nil {
			t.Fatal("connected with a refused client secret")
		}
		requireProblem(t, k, err, "STREAMING_HUB_KAFKA_OAUTH_CLIENT_SECRET")
		if strings.Contains(err.Error()+Diagnose(k, err).String(), "not-the-secret") {
			t.Fatalf("the error shows the secret: %v", err)
		}
	})

	t.Run("token the brokers refuse", func(t *testing.T) {
		idp.setLifetime(time.Hour)
		cluster.refuseAll(true)
		defer cluster.refuseAll(false)
		k := kafkaSettings(t, brokers, settings(clientSecret))
		cl, _ := newClient(t, k)
		err := ping(t, cl)
		if !errors.Is(err, kerr.SaslAuthenticationFailed) {
			t.Fatalf("got %v, want SASL_AUTHENTICATION_FAILED", err)
		}
		requireProblem(t, k, err, "STREAMING_HUB_KAFKA_OAUTH_CLIENT_ID")
	})
}

// TestAWSMSKIAM: the signature the brokers receive is made with the
// credentials of the standard chain (here its environment provider) and
// the configured region, as a verifier holding the secret recomputes it.
func TestAWSMSKIAM(t *testing.T) {
	const accessKey, secretKey, region = "AKIAHUBCTLTEST", "hubctl/test/secret/key", "eu-west-1"
	isolateAWSChain(t)
	t.Setenv("AWS_ACCESS_KEY_ID", accessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secretKey)
	settings := map[string]string{"KAFKA_SASL_MECHANISM": "AWS_MSK_IAM", "KAFKA_AWS_REGION": region}

	t.Run("signed with the chain's credentials", func(t *testing.T) {
		brokers := startMSKBroker(t, accessKey, secretKey, region)
		roundTrip(t, kafkaSettings(t, brokers, settings))
	})
	t.Run("a secret the brokers do not know", func(t *testing.T) {
		brokers := startMSKBroker(t, accessKey, "another/secret", region)
		k := kafkaSettings(t, brokers, settings)
		cl, _ := newClient(t, k)
		err := ping(t, cl)
		if !errors.Is(err, kerr.SaslAuthenticationFailed) {
			t.Fatalf("got %v, want SASL_AUTHENTICATION_FAILED", err)
		}
		requireProblem(t, k, err, "STREAMING_HUB_KAFKA_AWS_REGION")
		if strings.Contains(err.Error(), secretKey) {
			t.Fatalf("the error shows the secret key: %v", err)
		}
	})
}

func TestDiagnoseCredentialFetches(t *testing.T) {
	oauthCfg := config.KafkaConfig{SASLMechanism: config.SASLOAuthBearer}
	cases := []struct {
		name    string
		k       config.KafkaConfig
		err     error
		setting string
	}{
		{"token endpoint unreachable", oauthCfg, &TokenError{Err: &netError{}}, "STREAMING_HUB_KAFKA_OAUTH_TOKEN_URL"},
		{"token endpoint refuses", oauthCfg, &TokenError{Err: errors.New("the token endpoint answered invalid_client")}, "STREAMING_HUB_KAFKA_OAUTH_CLIENT_SECRET"},
		{"no AWS credentials", config.KafkaConfig{SASLMechanism: config.SASLAWSMSKIAM}, &CredentialsError{Err: errors.New("no EC2 IMDS role found")}, "AWS credential chain"},
		{"mechanism not offered", oauthCfg, kerr.UnsupportedSaslMechanism, "STREAMING_HUB_KAFKA_SASL_MECHANISM"},
		{"no answer", config.KafkaConfig{}, context.DeadlineExceeded, "STREAMING_HUB_KAFKA_BROKERS"},
		{"unknown", config.KafkaConfig{}, errors.New("something else"), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Diagnose(c.k, c.err)
			if c.setting == "" && got.Setting != "" || !strings.Contains(got.Setting, c.setting) {
				t.Fatalf("Diagnose = %q, want the setting to name %q", got, c.setting)
			}
		})
	}
}

type netError struct{}

func (*netError) Error() string   { return "dial tcp 127.0.0.1:1: connect: connection refused" }
func (*netError) Timeout() bool   { return false }
func (*netError) Temporary() bool { return false }

// tokenEndpoint is an identity provider's client-credentials endpoint on
// loopback, issuing opaque tokens it remembers.
type tokenEndpoint struct {
	url string

	mu       sync.Mutex
	lifetime time.Duration
	issued   map[string]time.Time // token → expiry
	count    int
	scope    string
}

func newTokenEndpoint(t *testing.T, clientID, clientSecret string) *tokenEndpoint {
	e := &tokenEndpoint{lifetime: time.Hour, issued: map[string]time.Time{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, secret, ok := r.BasicAuth()
		if err := r.ParseForm(); err != nil || r.Form.Get("grant_type") != "client_credentials" {
			http.Error(w, `{"error":"unsupported_grant_type"}`, http.StatusBadRequest)
			return
		}
		if !ok {
			id, secret = r.Form.Get("client_id"), r.Form.Get("client_secret")
		}
		w.Header().Set("Content-Type", "application/json")
		if id != clientID || secret != clientSecret {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"invalid_client"}`))
			return
		}
		e.mu.Lock()
		e.count++
		token := fmt.Sprintf("token-%d-%d", e.count, time.Now().UnixNano())
		e.issued[token] = time.Now().Add(e.lifetime)
		e.scope = r.Form.Get("scope")
		lifetime := e.lifetime
		e.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": token, "token_type": "Bearer", "expires_in": int(lifetime.Seconds())})
	}))
	t.Cleanup(srv.Close)
	e.url = srv.URL + "/oauth2/token"
	return e
}

func (e *tokenEndpoint) setLifetime(d time.Duration) { e.mu.Lock(); e.lifetime = d; e.mu.Unlock() }
func (e *tokenEndpoint) issuedCount() int            { e.mu.Lock(); defer e.mu.Unlock(); return e.count }
func (e *tokenEndpoint) lastScope() string           { e.mu.Lock(); defer e.mu.Unlock(); return e.scope }

func (e *tokenEndpoint) valid(token string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	expiry, ok := e.issued[token]
	return ok && time.Now().Before(expiry)
}

// oauthBroker answers the SASL exchange of OAUTHBEARER for kfake, which
// checks only PLAIN and SCRAM itself: a token is accepted when the
// identity provider issued it and it has not expired.
type oauthBroker struct {
	mu        sync.Mutex
	tokens    []string
	refuseAny bool
}

func (b *oauthBroker) presented() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.tokens...)
}

func (b *oauthBroker) refuseAll(refuse bool) { b.mu.Lock(); b.refuseAny = refuse; b.mu.Unlock() }

func startOAuthBroker(t *testing.T, idp *tokenEndpoint) (*oauthBroker, []string) {
	t.Helper()
	broker := &oauthBroker{}
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, securityTopic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	controlSASL(cluster, "OAUTHBEARER", func(auth []byte) error {
		// RFC 7628: gs2 header, then key=value pairs separated by 0x01.
		var token string
		for _, kv := range bytes.Split(auth, []byte{1}) {
			if v, ok := bytes.CutPrefix(kv, []byte("auth=Bearer ")); ok {
				token = string(v)
			}
		}
		broker.mu.Lock()
		broker.tokens = append(broker.tokens, token)
		refuse := broker.refuseAny
		broker.mu.Unlock()
		if refuse || !idp.valid(token) {
			return errors.New("invalid or expired token")
		}
		return nil
	})
	return broker, cluster.ListenAddrs()
}

// startMSKBroker checks AWS_MSK_IAM signatures as MSK does: the request it
// signs is recomputed with the secret the broker knows.
func startMSKBroker(t *testing.T, accessKey, secretKey, region string) []string {
	t.Helper()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, securityTopic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	controlSASL(cluster, "AWS_MSK_IAM", func(auth []byte) error {
		return verifyMSKSignature(auth, accessKey, secretKey, region)
	})
	return cluster.ListenAddrs()
}

func verifyMSKSignature(auth []byte, accessKey, secretKey, region string) error {
	var payload map[string]string
	if err := json.Unmarshal(auth, &payload); err != nil {
		return err
	}
	if payload["action"] != "kafka-cluster:Connect" || payload["version"] != "2020_10_22" {
		return fmt.Errorf("unexpected action %q or version %q", payload["action"], payload["version"])
	}
	signingTime, err := time.Parse("20060102T150405Z", payload["x-amz-date"])
	if err != nil {
		return err
	}
	wantCredential := accessKey + "/" + signingTime.Format("20060102") + "/" + region + "/kafka-cluster/aws4_request"
	if payload["x-amz-credential"] != wantCredential {
		return fmt.Errorf("credential %q, want %q", payload["x-amz-credential"], wantCredential)
	}
	req, err := http.NewRequest(http.MethodGet, "https://"+payload["host"]+"/?Action=kafka-cluster%3AConnect&X-Amz-Expires=900", nil)
	if err != nil {
		return err
	}
	signed, _, err := v4.NewSigner().PresignHTTP(context.Background(),
		aws.Credentials{AccessKeyID: accessKey, SecretAccessKey: secretKey},
		req, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "kafka-cluster", region, signingTime)
	if err != nil {
		return err
	}
	if !strings.Contains(signed, "X-Amz-Signature="+payload["x-amz-signature"]) {
		return errors.New("signature does not match")
	}
	return nil
}

// controlSASL has kfake answer the handshake and authentication of one
// mechanism, checking the client's bytes with check.
func controlSASL(cluster *kfake.Cluster, mechanism string, check func(auth []byte) error) {
	cluster.ControlKey(int16(kmsg.SASLHandshake), func(req kmsg.Request) (kmsg.Response, error, bool) {
		cluster.KeepControl()
		resp := req.(*kmsg.SASLHandshakeRequest).ResponseKind().(*kmsg.SASLHandshakeResponse)
		resp.SupportedMechanisms = []string{mechanism}
		if req.(*kmsg.SASLHandshakeRequest).Mechanism != mechanism {
			resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		}
		return resp, nil, true
	})
	cluster.ControlKey(int16(kmsg.SASLAuthenticate), func(req kmsg.Request) (kmsg.Response, error, bool) {
		cluster.KeepControl()
		auth := req.(*kmsg.SASLAuthenticateRequest)
		resp := auth.ResponseKind().(*kmsg.SASLAuthenticateResponse)
		if err := check(auth.SASLAuthBytes); err != nil {
			resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
			message := "authentication failed: " + err.Error()
			resp.ErrorMessage = &message
		} else if mechanism == "AWS_MSK_IAM" {
			// MSK answers a signature with the request id it logged.
			resp.SASLAuthBytes = []byte(`{"version":"2020_10_22","request-id":"hubctl-test"}`)
		}
		return resp, nil, true
	})
}

// isolateAWSChain keeps the credential chain to the environment the test
// sets: no shared files, no instance metadata.
func isolateAWSChain(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_REGION", "") // the setting fills it in; Setenv restores it
	t.Setenv("AWS_DEFAULT_REGION", "")
}
