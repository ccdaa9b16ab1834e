package kafkaclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/twmb/franz-go/pkg/sasl"
	saslaws "github.com/twmb/franz-go/pkg/sasl/aws"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/oauthtoken"
)

// tokenTimeout bounds one call to the identity provider's token endpoint.
const tokenTimeout = 10 * time.Second

func saslMechanism(ctx context.Context, k config.KafkaConfig) (sasl.Mechanism, error) {
	switch k.SASLMechanism {
	case config.SASLPlain:
		return plain.Auth{User: k.SASLUsername, Pass: k.SASLPassword}.AsMechanism(), nil
	case config.SASLScramSHA256:
		return scram.Auth{User: k.SASLUsername, Pass: k.SASLPassword}.AsSha256Mechanism(), nil
	case config.SASLScramSHA512:
		return scram.Auth{User: k.SASLUsername, Pass: k.SASLPassword}.AsSha512Mechanism(), nil
	case config.SASLOAuthBearer:
		return oauthBearer(k.OAuth), nil
	case config.SASLAWSMSKIAM:
		return mskIAM(ctx, k.AWSRegion)
	}
	return nil, fmt.Errorf("unsupported %sKAFKA_SASL_MECHANISM %q", config.EnvPrefix, k.SASLMechanism)
}

// TokenError is a failure to get an OAUTHBEARER token from the identity
// provider, as opposed to the brokers refusing one.
type TokenError struct{ Err error }

func (e *TokenError) Error() string { return "get an OAUTHBEARER token: " + e.Err.Error() }
func (e *TokenError) Unwrap() error { return e.Err }

// oauthBearer authenticates each connection with a token of the
// client-credentials flow. The token is reused until shortly before it
// expires (oauth2.ReuseTokenSource's margin), so a connection never
// presents one that lapses during its handshake, and a fixed secret or
// provider is picked up by the next fetch.
func oauthBearer(o config.KafkaOAuthConfig) sasl.Mechanism {
	cc := clientcredentials.Config{
		ClientID:     o.ClientID,
		ClientSecret: o.ClientSecret,
		TokenURL:     o.TokenURL,
		Scopes:       strings.Fields(o.Scope),
	}
	// The token source keeps the context for every later fetch; the
	// client's timeout bounds each one instead.
	fetchCtx := context.WithValue(context.Background(), oauth2.HTTPClient, &http.Client{Timeout: tokenTimeout})
	tokens := cc.TokenSource(fetchCtx)
	return oauth.Oauth(func(context.Context) (oauth.Auth, error) {
		token, err := tokens.Token()
		if err != nil {
			return oauth.Auth{}, &TokenError{Err: oauthtoken.Redact(err)}
		}
		return oauth.Auth{Token: token.AccessToken}, nil
	})
}

// CredentialsError is a failure to get AWS credentials from the standard
// chain, as opposed to the brokers refusing a signature.
type CredentialsError struct{ Err error }

func (e *CredentialsError) Error() string { return "get AWS credentials: " + e.Err.Error() }
func (e *CredentialsError) Unwrap() error { return e.Err }

// mskIAM signs each connection with credentials of the standard AWS chain
// (environment, shared files, web identity, container and instance
// roles), cached and refreshed by the SDK before they expire.
func mskIAM(ctx context.Context, region string) (sasl.Mechanism, error) {
	var opts []func(*awsconfig.LoadOptions) error
	if region != "" {
		opts = append(opts, awsconfig.WithRegion(region))
		// franz-go reads the signature's region from an MSK broker's host
		// name, and from AWS_REGION where the name does not carry one
		// (a private DNS name): the setting fills in for the latter.
		if os.Getenv("AWS_REGION") == "" {
			if err := os.Setenv("AWS_REGION", region); err != nil {
				return nil, err
			}
		}
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("AWS_MSK_IAM: load the AWS configuration: %w", err)
	}
	credentials := cfg.Credentials
	if credentials == nil {
		return nil, errors.New("AWS_MSK_IAM: the AWS credential chain found no credentials provider")
	}
	return saslaws.ManagedStreamingIAM(func(ctx context.Context) (saslaws.Auth, error) {
		creds, err := credentials.Retrieve(ctx)
		if err != nil {
			return saslaws.Auth{}, &CredentialsError{Err: err}
		}
		return saslaws.Auth{AccessKey: creds.AccessKeyID, SecretKey: creds.SecretAccessKey, SessionToken: creds.SessionToken}, nil
	}), nil
}
