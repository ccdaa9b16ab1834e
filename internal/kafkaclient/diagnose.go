package kafkaclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hubctl/hubctl/internal/config"
)

// Problem is why the brokers cannot be used, in the words of the settings,
// so one log line tells an operator what to fix.
type Problem struct {
	// Cause says what went wrong; it never holds a credential.
	Cause string
	// Setting names what to look at; "" when nothing is known to be wrong
	// on this side.
	Setting string
}

func (p Problem) String() string {
	if p.Setting == "" {
		return p.Cause
	}
	return p.Cause + " (check " + p.Setting + ")"
}

// Diagnose names the cause of a failed Kafka request given the settings
// it was made with.
func Diagnose(k config.KafkaConfig, err error) Problem {
	env := func(name string) string { return config.EnvPrefix + name }
	mechanism := string(k.SASLMechanism)
	credentials := map[config.SASLMechanism]string{
		config.SASLPlain:       env("KAFKA_SASL_USERNAME") + " and " + env("KAFKA_SASL_PASSWORD"),
		config.SASLScramSHA256: env("KAFKA_SASL_USERNAME") + " and " + env("KAFKA_SASL_PASSWORD"),
		config.SASLScramSHA512: env("KAFKA_SASL_USERNAME") + " and " + env("KAFKA_SASL_PASSWORD"),
		config.SASLOAuthBearer: env("KAFKA_OAUTH_CLIENT_ID") + " and the identity provider's grants",
		config.SASLAWSMSKIAM:   "the AWS credentials and " + env("KAFKA_AWS_REGION"),
	}[k.SASLMechanism]

	var (
		tokenErr    *TokenError
		awsErr      *CredentialsError
		unknownCA   x509.UnknownAuthorityError
		wrongHost   x509.HostnameError
		invalidCert x509.CertificateInvalidError
		notTLS      tls.RecordHeaderError
		firstEOF    *kgo.ErrFirstReadEOF
		opErr       *net.OpError
	)
	switch {
	case errors.As(err, &tokenErr):
		var netErr net.Error
		if errors.As(tokenErr.Err, &netErr) {
			return Problem{"cannot reach the OAUTHBEARER token endpoint: " + tokenErr.Err.Error(), env("KAFKA_OAUTH_TOKEN_URL")}
		}
		return Problem{"the identity provider refused the client credentials: " + tokenErr.Err.Error(),
			env("KAFKA_OAUTH_CLIENT_ID") + " and " + env("KAFKA_OAUTH_CLIENT_SECRET")}
	case errors.As(err, &awsErr):
		return Problem{"no AWS credentials for AWS_MSK_IAM: " + awsErr.Err.Error(),
			"the AWS credential chain (AWS_ACCESS_KEY_ID, AWS_PROFILE, a role) and " + env("KAFKA_AWS_REGION")}
	case errors.As(err, &unknownCA):
		return Problem{"the brokers' certificate is signed by an authority this hub does not trust", caSetting(k)}
	case errors.As(err, &wrongHost):
		return Problem{"the brokers' certificate does not name the address dialed: " + wrongHost.Error(), env("KAFKA_BROKERS")}
	case errors.As(err, &invalidCert):
		return Problem{"the brokers' certificate is not valid: " + invalidCert.Error(), caSetting(k)}
	case errors.As(err, &notTLS):
		return Problem{"the brokers do not speak TLS on this port", env("KAFKA_TLS_ENABLED")}
	case remoteAlert(err, "certificate required", "bad certificate", "unknown certificate authority", "certificate unknown"):
		if k.TLSCertFile == "" {
			return Problem{"the brokers require a client certificate", env("KAFKA_TLS_CERT_FILE")}
		}
		return Problem{"the brokers refused the client certificate", env("KAFKA_TLS_CERT_FILE")}
	case errors.Is(err, kerr.UnsupportedSaslMechanism):
		return Problem{"the brokers do not offer SASL " + mechanism, env("KAFKA_SASL_MECHANISM")}
	case errors.Is(err, kerr.SaslAuthenticationFailed):
		return Problem{"the brokers refused the SASL " + mechanism + " credentials", credentials}
	case k.SASLMechanism != config.SASLNone && (errors.Is(err, kerr.IllegalSaslState) || errors.As(err, &firstEOF) || errors.Is(err, io.EOF)):
		// Some brokers (kfake among them) close the connection on a bad
		// proof instead of answering SASL_AUTHENTICATION_FAILED.
		return Problem{"the brokers closed the connection during SASL " + mechanism + " authentication", credentials}
	case errors.As(err, &firstEOF):
		switch text := firstEOF.Error(); {
		case strings.Contains(text, "TLS when the broker is not"):
			return Problem{"the brokers closed the connection at once: they may not speak TLS on this port", env("KAFKA_TLS_ENABLED")}
		case strings.Contains(text, "is TLS missing"):
			return Problem{"the brokers closed the connection at once: they may require TLS", env("KAFKA_TLS_ENABLED")}
		default:
			return Problem{"the brokers closed the connection at once: they may require SASL", env("KAFKA_SASL_MECHANISM")}
		}
	case errors.Is(err, context.DeadlineExceeded):
		return Problem{"the brokers did not answer in time", env("KAFKA_BROKERS")}
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return Problem{"cannot reach the brokers: " + opErr.Err.Error(), env("KAFKA_BROKERS")}
	}
	return Problem{Cause: err.Error()}
}

func caSetting(k config.KafkaConfig) string {
	if k.TLSCAFile != "" {
		return config.EnvPrefix + "KAFKA_TLS_CA_FILE"
	}
	return config.EnvPrefix + "KAFKA_TLS_CA_FILE, or the system's trusted authorities"
}

// remoteAlert reports whether err is a TLS alert the peer sent with one of
// the descriptions. crypto/tls keeps its alert type unexported on TCP
// connections, so its text is all there is to match.
func remoteAlert(err error, descriptions ...string) bool {
	var opErr *net.OpError
	if !errors.As(err, &opErr) || opErr.Op != "remote error" {
		return false
	}
	for _, d := range descriptions {
		if strings.HasSuffix(opErr.Err.Error(), "tls: "+d) {
			return true
		}
	}
	return false
}
