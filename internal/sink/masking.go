package sink

import (
	"encoding/json"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// Masked stands in for a credential wherever a sink object is shown
// (docs/concepts.md, Subscriptions). Sent back in a credential's place on an update, it means "keep
// the current value", so a sink object that is read, edited and sent back
// changes no credential the edit did not touch.
const Masked = hubapi.Masked

// CredentialMasker is implemented by the types whose credentials sit inside
// another field of the sink object, such as a password inside a URL. The
// hub shows every other type's credentials as fields of their own holding
// Masked, and takes Masked back in such a field as its current value.
type CredentialMasker interface {
	// MaskCredentials returns the stored public configuration as reads show
	// it, without "type": each credential in its place, as Masked.
	// credentialFields are the keys of the stored Credentials.
	MaskCredentials(public json.RawMessage, credentialFields []string) (map[string]any, error)
	// RestoreMasked returns the sink object raw, before Parse sees it, with
	// each credential that reads Masked replaced by its current value.
	// current is the configuration raw replaces, Credentials decrypted, or
	// nil on create. A mask that stands for nothing, or that the type will
	// not carry over to the destination raw now names, is a *FieldError.
	// Neither errors nor anything but the returned object may hold a
	// credential.
	RestoreMasked(raw json.RawMessage, current *Config) (json.RawMessage, error)
}
