package rabbitmq

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/hubctl/hubctl/internal/sink"
)

// Reads show a broker URL's password masked in place, as
// amqp://user:****@host/vhost, rather than beside the URL as a field of its
// own. What a read shows is then a sink object Parse accepts, so it can be
// sent back as it is; and the URL stays the one place a password is given,
// where a separate field would be a second one that could disagree with it.
var _ sink.CredentialMasker = (*Type)(nil)

// MaskCredentials shows the stored URL with its password, when it has one,
// as sink.Masked.
func (t *Type) MaskCredentials(public json.RawMessage, credentialFields []string) (map[string]any, error) {
	view := map[string]any{}
	if err := json.Unmarshal(public, &view); err != nil || view == nil {
		return nil, errors.New("rabbitmq sink: stored configuration is not a JSON object")
	}
	if !slices.Contains(credentialFields, passwordField) {
		return view, nil
	}
	stored, _ := view["url"].(string)
	u, err := url.Parse(stored)
	if err != nil || u.Host == "" {
		return nil, errors.New("rabbitmq sink: stored url is not a URL with a host")
	}
	username := ""
	if u.User != nil {
		username = u.User.Username()
	}
	u.User = nil
	// Spliced in rather than set with url.UserPassword, which would
	// percent-encode the mask's asterisks.
	prefix := u.Scheme + "://"
	view["url"] = prefix + url.User(username).String() + ":" + sink.Masked + "@" + strings.TrimPrefix(u.String(), prefix)
	return view, nil
}

// RestoreMasked puts the current password back into a URL whose password
// is sink.Masked. The password is carried over only to the same broker and
// user name: AMQP's PLAIN mechanism hands the password itself to whichever
// broker the URL names, so a caller who may change the sink but not read
// its password must not be able to send it to a broker of their own.
func (t *Type) RestoreMasked(raw json.RawMessage, current *sink.Config) (json.RawMessage, error) {
	var fields map[string]json.RawMessage
	var target string
	if json.Unmarshal(raw, &fields) != nil || json.Unmarshal(fields["url"], &target) != nil {
		return raw, nil // Parse says what is wrong with it
	}
	incoming, err := parseBrokerURL(target)
	if err != nil || !incoming.hasPassword || incoming.uri.Password != sink.Masked {
		return raw, nil
	}
	password, err := currentPassword(current, incoming.uri)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(target)
	if err != nil {
		return nil, errors.New("rabbitmq sink: url parsed once but not twice")
	}
	u.User = url.UserPassword(u.User.Username(), password)
	if fields["url"], err = json.Marshal(u.String()); err != nil {
		return nil, &sink.FieldError{Field: "sink.url", Message: "cannot be stored"}
	}
	restored, err := json.Marshal(fields)
	if err != nil {
		return nil, &sink.FieldError{Field: "sink", Message: "cannot be stored"}
	}
	return restored, nil
}

// currentPassword is the password a masked one in a URL for incoming stands
// for.
func currentPassword(current *sink.Config, incoming amqp.URI) (string, error) {
	refuse := func(why string) error {
		return &sink.FieldError{Field: "sink.url", Message: "password is " + strconv.Quote(sink.Masked) +
			", the mask reads show in its place, " + why + ": send the password itself"}
	}
	if current == nil || len(current.Credentials) == 0 {
		return "", refuse("and there is no current password for it to keep")
	}
	var pub publicConfig
	var creds credentials
	if json.Unmarshal(current.Public, &pub) != nil || json.Unmarshal(current.Credentials, &creds) != nil {
		return "", errors.New("rabbitmq sink: stored configuration or credentials are not JSON objects")
	}
	stored, err := parseBrokerURL(pub.URL)
	if err != nil {
		return "", fmt.Errorf("rabbitmq sink: stored url: %w", err)
	}
	if login(stored.uri) != login(incoming) {
		return "", refuse("which keeps the current password only for the same broker and user name")
	}
	return creds.Password, nil
}

// login is who a URL signs in as, and where: scheme, user name and broker
// address. The virtual host is not part of it: it is a scope on the same
// broker, under the same password.
func login(uri amqp.URI) string {
	return strings.ToLower(uri.Scheme) + "://" + url.User(uri.Username).String() + "@" + hostPort(uri)
}
