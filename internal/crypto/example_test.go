package crypto_test

import (
	"fmt"

	"github.com/hubctl/hubctl/internal/crypto"
)

func ExampleKeyring() {
	// In production this is the value of the variable STREAMING_HUB_KEK_REF
	// names. These fixed keys only illustrate a rotation from "old" to
	// "new"; generate real ones with: openssl rand -base64 32.
	const oldKEK = "old:3q2+7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
	const rotatedKEK = "new:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=," + oldKEK

	before, err := crypto.ParseKeyring(oldKEK)
	if err != nil {
		fmt.Println(err)
		return
	}
	envelope, err := before.Encrypt([]byte("whsec_example"), "0190f5c2-7a3b-7cc4-9a4e-2d1f3b5c6d7e", "signing_secret")
	if err != nil {
		fmt.Println(err)
		return
	}

	after, err := crypto.ParseKeyring(rotatedKEK)
	if err != nil {
		fmt.Println(err)
		return
	}
	secret, err := after.Decrypt(envelope, "0190f5c2-7a3b-7cc4-9a4e-2d1f3b5c6d7e", "signing_secret")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(secret))
	fmt.Println("active key:", after.ActiveKeyID())
	fmt.Println("needs re-encryption:", after.NeedsReencrypt(envelope))

	_, err = after.Decrypt(envelope, "0190f5c2-7a3b-7cc4-9a4e-2d1f3b5c6d7e", "sink.password")
	fmt.Println(err)
	// Output:
	// whsec_example
	// active key: new
	// needs re-encryption: true
	// crypto: envelope failed authentication (tampered, wrong key, or wrong row id or field)
}
