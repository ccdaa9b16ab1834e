// Package oauthtoken says why a client-credentials token could not be had,
// without what the identity provider answered: a provider may echo what
// it was sent, secrets included.
package oauthtoken

import (
	"errors"
	"fmt"

	"golang.org/x/oauth2"
)

// Redact keeps the status and the OAuth error code of a token endpoint's
// refusal and drops its body; other errors (the network's) pass as they
// are.
func Redact(err error) error {
	var retrieve *oauth2.RetrieveError
	if errors.As(err, &retrieve) {
		reason := retrieve.ErrorCode
		if reason == "" && retrieve.Response != nil {
			reason = retrieve.Response.Status
		}
		if reason == "" {
			reason = "a refusal"
		}
		return fmt.Errorf("the token endpoint answered %s", reason)
	}
	return err
}
