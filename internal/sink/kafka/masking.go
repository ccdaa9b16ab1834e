package kafka

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/hubctl/hubctl/internal/sink"
)

// Reads show the SASL password masked inside sink.sasl, where it was
// given, so a read is a sink object Parse takes back as it is.
var _ sink.CredentialMasker = (*Type)(nil)

// MaskCredentials shows the stored configuration with the SASL password
// as sink.Masked.
func (t *Type) MaskCredentials(public json.RawMessage, credentialFields []string) (map[string]any, error) {
	view := map[string]any{}
	if err := json.Unmarshal(public, &view); err != nil || view == nil {
		return nil, errors.New("kafka sink: stored configuration is not a JSON object")
	}
	if auth, ok := view["sasl"].(map[string]any); ok && slices.Contains(credentialFields, passwordField) {
		auth[passwordField] = sink.Masked
	}
	return view, nil
}

// RestoreMasked puts the current password back where raw sends the mask.
// It is carried over only to the same brokers and user name: PLAIN hands
// the password itself to the brokers, so a caller who may change the sink
// but not read its password must not be able to send it to brokers of
// their own.
func (t *Type) RestoreMasked(raw json.RawMessage, current *sink.Config) (json.RawMessage, error) {
	var fields, auth map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil || json.Unmarshal(fields["sasl"], &auth) != nil || auth == nil || !isMasked(auth[passwordField]) {
		return raw, nil // nothing masked, or Parse says what is wrong
	}
	refuse := func(why string) error {
		return &sink.FieldError{Field: "sink.sasl.password", Message: "password is " + strconv.Quote(sink.Masked) +
			", the mask reads show in its place, " + why + ": send the password itself"}
	}
	if current == nil || len(current.Credentials) == 0 {
		return nil, refuse("and there is no current one for it to keep")
	}
	var pub publicConfig
	var creds credentials
	if json.Unmarshal(current.Public, &pub) != nil || json.Unmarshal(current.Credentials, &creds) != nil || pub.SASL == nil {
		return nil, errors.New("kafka sink: stored configuration or credentials are not what a sasl login stores")
	}
	brokers, err := t.parseBrokers(fields["brokers"])
	if err != nil {
		return raw, nil // Parse says what is wrong with them
	}
	var username string
	_ = json.Unmarshal(auth["username"], &username)
	if strings.Join(slices.Sorted(slices.Values(brokers)), ",") != strings.Join(slices.Sorted(slices.Values(pub.Brokers)), ",") || username != pub.SASL.Username {
		return nil, refuse("which keeps the current one only for the same brokers and user name")
	}
	var restored json.RawMessage
	if auth[passwordField], err = json.Marshal(creds.Password); err == nil {
		if fields["sasl"], err = json.Marshal(auth); err == nil {
			restored, err = json.Marshal(fields)
		}
	}
	if err != nil {
		return nil, &sink.FieldError{Field: "sink.sasl", Message: "cannot be stored"}
	}
	return restored, nil
}

func isMasked(value json.RawMessage) bool {
	var text string
	return json.Unmarshal(value, &text) == nil && text == sink.Masked
}
