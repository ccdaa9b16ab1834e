package pubsub

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"

	"github.com/hubctl/hubctl/internal/sink"
)

// Reads show credentials_json as sink.Masked; an update may send the mask
// back to keep the current key, but only for the same endpoint.
var _ sink.CredentialMasker = (*Type)(nil)

// MaskCredentials shows the stored configuration with the key as
// sink.Masked.
func (t *Type) MaskCredentials(public json.RawMessage, credentialFields []string) (map[string]any, error) {
	view := map[string]any{}
	if err := json.Unmarshal(public, &view); err != nil || view == nil {
		return nil, errors.New("pubsub sink: stored configuration is not a JSON object")
	}
	if slices.Contains(credentialFields, credentialsField) {
		view[credentialsField] = sink.Masked
	}
	return view, nil
}

// RestoreMasked puts the current key back where raw sends the mask. It is
// carried over only to the same endpoint: an emulator or private endpoint
// receives the key's signed tokens, so a caller who may change the sink
// but not read its key must not be able to have them sent to an endpoint
// of their own. The project and topic may change: the key itself decides
// what it may publish to.
func (t *Type) RestoreMasked(raw json.RawMessage, current *sink.Config) (json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil || !isMasked(fields[credentialsField]) {
		return raw, nil // nothing masked, or Parse says what is wrong
	}
	refuse := func(why string) error {
		return &sink.FieldError{Field: "sink." + credentialsField, Message: credentialsField + " is " + strconv.Quote(sink.Masked) +
			", the mask reads show in its place, " + why + ": send the key itself"}
	}
	if current == nil || len(current.Credentials) == 0 {
		return nil, refuse("and there is no current key for it to keep")
	}
	var pub publicConfig
	var creds credentials
	if json.Unmarshal(current.Public, &pub) != nil || json.Unmarshal(current.Credentials, &creds) != nil || creds.JSON == "" {
		return nil, errors.New("pubsub sink: stored configuration or credentials are not what a pubsub sink stores")
	}
	endpoint, _, err := optionalString(fields, "endpoint")
	if err != nil {
		return raw, nil // Parse says what is wrong with it
	}
	if endpoint != "" {
		if endpoint, err = CheckEndpoint(endpoint, true); err != nil {
			return raw, nil // Parse says what is wrong with it
		}
	}
	if endpoint != pub.Endpoint {
		return nil, refuse("which keeps the current key only for the same endpoint")
	}
	var restored json.RawMessage
	if fields[credentialsField], err = json.Marshal(creds.JSON); err == nil {
		restored, err = json.Marshal(fields)
	}
	if err != nil {
		return nil, &sink.FieldError{Field: "sink." + credentialsField, Message: "cannot be stored"}
	}
	return restored, nil
}

func isMasked(value json.RawMessage) bool {
	var text string
	return json.Unmarshal(value, &text) == nil && text == sink.Masked
}
