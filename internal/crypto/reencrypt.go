package crypto

// Reencrypt returns the envelope sealed under the active key: unchanged
// (changed false) when it already is, else decrypted with the key it names
// and sealed again under the active one, for the same row id and field. It
// fails as Decrypt does, so an envelope under a key the keyring lacks is
// reported, never silently kept.
func (k *Keyring) Reencrypt(envelope, rowID, field string) (string, bool, error) {
	if !k.NeedsReencrypt(envelope) {
		// Already current or malformed: decrypting proves which, and a
		// malformed value gets Decrypt's error.
		if _, err := k.Decrypt(envelope, rowID, field); err != nil {
			return "", false, err
		}
		return envelope, false, nil
	}
	plaintext, err := k.Decrypt(envelope, rowID, field)
	if err != nil {
		return "", false, err
	}
	sealed, err := k.Encrypt(plaintext, rowID, field)
	clear(plaintext)
	if err != nil {
		return "", false, err
	}
	return sealed, true, nil
}

// EnvelopeKeyID returns the id of the key an envelope was sealed under. It
// checks the envelope's shape only, not its authenticity; errors match
// [ErrMalformed].
func EnvelopeKeyID(envelope string) (string, error) {
	keyID, _, err := parseEnvelope(envelope)
	return keyID, err
}
