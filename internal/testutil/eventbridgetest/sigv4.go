package eventbridgetest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// errSignatureMismatch is AWS's own wording, so a sink's recorded error
// reads as it would against the real service.
var errSignatureMismatch = errors.New("The request signature we calculated does not match the signature you provided.") //lint:ignore ST1005 AWS's message, verbatim

// VerifySigV4 recomputes the AWS Signature Version 4 of a received request
// (https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html)
// and compares it with the one it carries; body is the request body, already
// read. It is written from the specification rather than with the SDK's
// signer, so a fault in the signing a sink relies on cannot hide itself.
// A signing time more than five minutes from now is refused, as AWS does.
func VerifySigV4(r *http.Request, body []byte, accessKeyID, secretKey, region, service string, now time.Time) error {
	const algorithm = "AWS4-HMAC-SHA256"
	auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), algorithm+" ")
	if !ok {
		return errors.New("missing or non-SigV4 Authorization")
	}
	parts := map[string]string{}
	for item := range strings.SplitSeq(auth, ",") {
		key, value, _ := strings.Cut(strings.TrimSpace(item), "=")
		parts[key] = value
	}
	credential := strings.Split(parts["Credential"], "/")
	if len(credential) != 5 || credential[4] != "aws4_request" {
		return errors.New("malformed Credential")
	}
	if credential[0] != accessKeyID {
		return errors.New("unknown access key")
	}
	date, scopeRegion, scopeService := credential[1], credential[2], credential[3]
	if scopeRegion != region || scopeService != service {
		return fmt.Errorf("scope %s/%s, want %s/%s", scopeRegion, scopeService, region, service)
	}
	amzDate := r.Header.Get("X-Amz-Date")
	signedAt, err := time.Parse("20060102T150405Z", amzDate)
	if err != nil || !strings.HasPrefix(amzDate, date) {
		return errors.New("bad X-Amz-Date")
	}
	if skew := now.Sub(signedAt); skew > 5*time.Minute || skew < -5*time.Minute {
		return errors.New("request signed too long ago")
	}
	signedHeaders := strings.Split(parts["SignedHeaders"], ";")
	for _, required := range []string{"host", "x-amz-date", "x-amz-target", "content-type"} {
		if !slices.Contains(signedHeaders, required) {
			return fmt.Errorf("%s is not signed", required)
		}
	}

	var canonicalHeaders strings.Builder
	for _, name := range signedHeaders {
		var values []string
		switch name {
		case "host":
			values = []string{r.Host}
		case "content-length":
			values = []string{fmt.Sprint(r.ContentLength)}
		default:
			values = r.Header.Values(name)
		}
		for i, v := range values {
			values[i] = strings.Join(strings.Fields(v), " ")
		}
		canonicalHeaders.WriteString(name + ":" + strings.Join(values, ",") + "\n")
	}
	bodyHash := sha256.Sum256(body)
	canonicalRequest := strings.Join([]string{
		r.Method,
		r.URL.EscapedPath(),
		r.URL.RawQuery,
		canonicalHeaders.String(),
		parts["SignedHeaders"],
		hex.EncodeToString(bodyHash[:]),
	}, "\n")
	requestHash := sha256.Sum256([]byte(canonicalRequest))
	scope := date + "/" + region + "/" + service + "/aws4_request"
	stringToSign := algorithm + "\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(requestHash[:])

	key := []byte("AWS4" + secretKey)
	for _, step := range []string{date, region, service, "aws4_request"} {
		key = hmacSHA256(key, step)
	}
	want := hex.EncodeToString(hmacSHA256(key, stringToSign))
	if !hmac.Equal([]byte(want), []byte(parts["Signature"])) {
		return errSignatureMismatch
	}
	return nil
}

func hmacSHA256(key []byte, message string) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(message))
	return mac.Sum(nil)
}
