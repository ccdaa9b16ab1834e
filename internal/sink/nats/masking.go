package nats

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"

	"github.com/hubctl/hubctl/internal/sink"
)

// Reads show the token, password or credentials file masked inside
// sink.credentials, where it was given, so a read is a sink object Parse
// takes back as it is.
var _ sink.CredentialMasker = (*Type)(nil)

// secretFields are the credential fields, one per kind of login.
var secretFields = []string{tokenField, passwordField, credsField}

// MaskCredentials shows the stored configuration with the login's secret
// as sink.Masked inside credentials.
func (t *Type) MaskCredentials(public json.RawMessage, credentialFields []string) (map[string]any, error) {
	view := map[string]any{}
	if err := json.Unmarshal(public, &view); err != nil || view == nil {
		return nil, errors.New("nats sink: stored configuration is not a JSON object")
	}
	for _, field := range secretFields {
		if !slices.Contains(credentialFields, field) {
			continue
		}
		shown, _ := view["credentials"].(map[string]any)
		if shown == nil {
			shown = map[string]any{}
		}
		shown[field] = sink.Masked
		view["credentials"] = shown
	}
	return view, nil
}

// RestoreMasked puts the current secret back where raw sends the mask. It
// is carried over only to the same server and user name: a token and a
// password reach the server itself, so a caller who may change the sink
// but not read its credentials must not be able to send them to a server
// of their own.
func (t *Type) RestoreMasked(raw json.RawMessage, current *sink.Config) (json.RawMessage, error) {
	var fields, given map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil || json.Unmarshal(fields["credentials"], &given) != nil || given == nil {
		return raw, nil // Parse says what is wrong with it
	}
	field := ""
	for _, name := range secretFields {
		if isMasked(given[name]) {
			field = name
		}
	}
	if field == "" {
		return raw, nil
	}
	refuse := func(why string) error {
		return &sink.FieldError{Field: "sink.credentials." + field, Message: field + " is " + strconv.Quote(sink.Masked) +
			", the mask reads show in its place, " + why + ": send the " + field + " itself"}
	}
	if current == nil || len(current.Credentials) == 0 {
		return nil, refuse("and there is no current one for it to keep")
	}
	var pub publicConfig
	var stored map[string]string
	if json.Unmarshal(current.Public, &pub) != nil || json.Unmarshal(current.Credentials, &stored) != nil {
		return nil, errors.New("nats sink: stored configuration or credentials are not JSON objects")
	}
	secret, ok := stored[field]
	if !ok {
		return nil, refuse("and the current credentials are of another kind")
	}
	var target, username, storedUsername string
	_ = json.Unmarshal(fields["url"], &target)
	_ = json.Unmarshal(given["username"], &username)
	if pub.Credentials != nil {
		storedUsername = pub.Credentials.Username
	}
	server, err := parseServerURL(target)
	if err != nil {
		return raw, nil // Parse says what is wrong with the url
	}
	if server.String() != pub.URL || username != storedUsername {
		return nil, refuse("which keeps the current one only for the same server and user name")
	}
	var restored json.RawMessage
	if given[field], err = json.Marshal(secret); err == nil {
		if fields["credentials"], err = json.Marshal(given); err == nil {
			restored, err = json.Marshal(fields)
		}
	}
	if err != nil {
		return nil, &sink.FieldError{Field: "sink.credentials", Message: "cannot be stored"}
	}
	return restored, nil
}

func isMasked(value json.RawMessage) bool {
	var text string
	return json.Unmarshal(value, &text) == nil && text == sink.Masked
}
