package webhook

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/hubctl/hubctl/internal/sink"
)

// Custom headers and endpoint auth of a webhook (docs/api.md, Webhook
// headers and auth). Header values are shown on reads as they were given:
// they route and label requests (a tenant id, an API version, a gateway's
// key name) and a secret belongs in auth, which is encrypted at rest and
// masked.

// Bounds of sink.headers: generous for routing and labels, far below what
// a receiver's server would refuse.
const (
	MaxHeaders          = 32
	MaxHeaderNameBytes  = 128
	MaxHeaderValueBytes = 1024
)

// Auth types of sink.auth.
const (
	AuthBasic             = "basic"
	AuthBearer            = "bearer"
	AuthClientCredentials = "oauth2_client_credentials"
	AuthMTLS              = "mtls"
)

// Fields of the auth credentials: the one secret of each auth type.
const (
	passwordField     = "password"
	tokenField        = "token"
	clientSecretField = "client_secret"
	clientKeyField    = "client_key"
)

// publicAuth is the shown part of sink.auth.
type publicAuth struct {
	Type     string `json:"type"`
	Username string `json:"username,omitempty"`
	// oauth2_client_credentials
	TokenURL string `json:"token_url,omitempty"`
	ClientID string `json:"client_id,omitempty"`
	Scope    string `json:"scope,omitempty"`
	Audience string `json:"audience,omitempty"`
	// mtls: the certificate is public; its key is a credential.
	ClientCert string `json:"client_cert,omitempty"`
}

// authCredentials is the encrypted part of sink.auth.
type authCredentials struct {
	Password     string `json:"password,omitempty"`
	Token        string `json:"token,omitempty"`
	ClientSecret string `json:"client_secret,omitempty"`
	ClientKey    string `json:"client_key,omitempty"`
}

// secretField is the credential field of an auth type.
func secretField(authType string) string {
	switch authType {
	case AuthBearer:
		return tokenField
	case AuthClientCredentials:
		return clientSecretField
	case AuthMTLS:
		return clientKeyField
	}
	return passwordField
}

// secret is the credential of an auth type.
func (c authCredentials) secret(authType string) string {
	switch authType {
	case AuthBearer:
		return c.Token
	case AuthClientCredentials:
		return c.ClientSecret
	case AuthMTLS:
		return c.ClientKey
	}
	return c.Password
}

// setsAuthorization reports whether an auth type sends the Authorization
// header, which sink.headers then may not.
func setsAuthorization(pub *publicAuth) bool {
	return pub != nil && pub.Type != AuthMTLS
}

// sameIdentity reports whether two auths of a type name the same
// principal, so a masked credential may be carried from one to the other.
func sameIdentity(a, b *publicAuth) bool {
	return a.Type == b.Type && a.Username == b.Username && a.TokenURL == b.TokenURL &&
		a.ClientID == b.ClientID && a.ClientCert == b.ClientCert
}

// reservedHeader reports whether the hub sets a header of this name itself
// (docs/consuming.md, What a delivery looks like); name is lowercased.
func reservedHeader(name string, withAuth bool) bool {
	for _, prefix := range []string{"x-lerian-", "x-webhook-", "webhook-"} {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	switch name {
	case "traceparent", "tracestate", "content-type", "content-length", "host", "user-agent":
		return true
	case "authorization":
		return withAuth
	}
	return false
}

// transportHeader reports whether a header belongs to the connection or
// the message's transfer rather than to the delivery (name is lowercased):
// hop-by-hop headers, those that change how the body is framed or coded,
// and credentials for something other than the destination. The HTTP
// client sets or drops them itself, so a value given here would be ignored
// or would break the request.
func transportHeader(name string) bool {
	switch name {
	case "connection", "keep-alive", "proxy-connection", "proxy-authorization", "proxy-authenticate",
		"te", "trailer", "transfer-encoding", "upgrade", "expect",
		"content-encoding", "accept-encoding", "cookie":
		return true
	}
	return false
}

// parseHeaders checks sink.headers: an object of header names to values,
// none of them one the hub owns.
func parseHeaders(raw json.RawMessage, withAuth bool) (map[string]string, error) {
	var headers map[string]string
	if err := json.Unmarshal(raw, &headers); err != nil || headers == nil {
		return nil, &sink.FieldError{Field: "sink.headers", Message: "must be an object of header names to string values"}
	}
	if len(headers) > MaxHeaders {
		return nil, &sink.FieldError{Field: "sink.headers", Message: fmt.Sprintf("at most %d headers", MaxHeaders)}
	}
	seen := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(headers)) {
		field := "sink.headers." + name
		if !validHeaderName(name) || len(name) > MaxHeaderNameBytes {
			return nil, &sink.FieldError{Field: "sink.headers", Message: fmt.Sprintf("%s is not a header name (letters, digits and !#$%%&'*+-.^_`|~, at most %d bytes)", strconv.QuoteToASCII(clipName(name)), MaxHeaderNameBytes)}
		}
		lower := strings.ToLower(name)
		if reservedHeader(lower, withAuth) {
			why := "the hub sets it on every request"
			if lower == "authorization" {
				why = "sink.auth sets it"
			}
			return nil, &sink.FieldError{Field: field, Message: fmt.Sprintf("%s cannot be set: %s", name, why)}
		}
		if transportHeader(lower) {
			return nil, &sink.FieldError{Field: field, Message: fmt.Sprintf("%s cannot be set: it belongs to the connection, not the delivery, and the HTTP client manages it", name)}
		}
		if other, dup := seen[lower]; dup {
			return nil, &sink.FieldError{Field: field, Message: fmt.Sprintf("%s repeats %s: header names are case-insensitive", name, other)}
		}
		seen[lower] = name
		if value := headers[name]; !validHeaderValue(value) || len(value) > MaxHeaderValueBytes {
			return nil, &sink.FieldError{Field: field, Message: fmt.Sprintf("value must be printable text without control characters (no NUL, CR or LF), at most %d bytes", MaxHeaderValueBytes)}
		}
	}
	return headers, nil
}

func clipName(name string) string {
	if len(name) > 40 {
		return name[:40] + "…"
	}
	return name
}

// validHeaderName reports whether name is an HTTP field name (RFC 9110
// §5.1: a token).
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// validHeaderValue reports whether value can be sent as a field value as
// it is: no control character but tab, no leading or trailing whitespace
// (which HTTP would drop).
func validHeaderValue(value string) bool {
	for i := 0; i < len(value); i++ {
		if c := value[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return false
		}
	}
	return strings.TrimSpace(value) == value
}

// authShapes is what sink.auth may be, for error messages.
const authShapes = `must be {"type": "basic", "username", "password"}, {"type": "bearer", "token"}, ` +
	`{"type": "oauth2_client_credentials", "token_url", "client_id", "client_secret", "scope"?, "audience"?} ` +
	`or {"type": "mtls", "client_cert", "client_key"}`

// authFields are the fields of each auth type, the required ones first.
var authFields = map[string]struct{ required, optional []string }{
	AuthBasic:             {required: []string{"type", "username", passwordField}},
	AuthBearer:            {required: []string{"type", tokenField}},
	AuthClientCredentials: {required: []string{"type", "token_url", "client_id", clientSecretField}, optional: []string{"scope", "audience"}},
	AuthMTLS:              {required: []string{"type", "client_cert", clientKeyField}},
}

// parseAuth checks sink.auth and splits it into what reads show and what is
// encrypted.
func (t *Type) parseAuth(raw json.RawMessage) (*publicAuth, *authCredentials, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return nil, nil, &sink.FieldError{Field: "sink.auth", Message: authShapes}
	}
	var authType string
	_ = json.Unmarshal(fields["type"], &authType)
	shape, known := authFields[authType]
	if !known {
		return nil, nil, &sink.FieldError{Field: "sink.auth.type", Message: `must be "basic", "bearer", "oauth2_client_credentials" or "mtls"`}
	}
	allowed := append(slices.Clone(shape.required), shape.optional...)
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if !slices.Contains(allowed, name) {
			return nil, nil, &sink.FieldError{Field: "sink.auth." + name, Message: fmt.Sprintf("unknown field; %s auth has only %s", authType, strings.Join(allowed, ", "))}
		}
	}
	text := func(name string, required bool) (string, error) {
		raw, present := fields[name]
		if !present && !required {
			return "", nil
		}
		var v string
		if err := json.Unmarshal(raw, &v); err != nil || v == "" {
			return "", &sink.FieldError{Field: "sink.auth." + name, Message: "is required, a non-empty string"}
		}
		if !validHeaderValue(v) || len(v) > MaxHeaderValueBytes {
			return "", &sink.FieldError{Field: "sink.auth." + name, Message: fmt.Sprintf("must be printable text without control characters, at most %d bytes", MaxHeaderValueBytes)}
		}
		return v, nil
	}
	switch authType {
	case AuthBearer:
		token, err := text(tokenField, true)
		if err != nil {
			return nil, nil, err
		}
		if strings.ContainsAny(token, " \t") {
			return nil, nil, &sink.FieldError{Field: "sink.auth.token", Message: "must not contain spaces"}
		}
		return &publicAuth{Type: AuthBearer}, &authCredentials{Token: token}, nil
	case AuthClientCredentials:
		return t.parseClientCredentials(fields, text)
	case AuthMTLS:
		return parseMTLS(fields)
	}
	username, err := text("username", true)
	if err != nil {
		return nil, nil, err
	}
	if strings.Contains(username, ":") {
		return nil, nil, &sink.FieldError{Field: "sink.auth.username", Message: "must not contain a colon (RFC 7617)"}
	}
	password, err := text(passwordField, true)
	if err != nil {
		return nil, nil, err
	}
	return &publicAuth{Type: AuthBasic, Username: username}, &authCredentials{Password: password}, nil
}

// authorization is the fixed Authorization header value of a stored auth:
// "" for none, and for the auth types that set it per request or not at
// all.
func authorization(pub *publicAuth, creds authCredentials) (string, error) {
	switch {
	case pub == nil:
		return "", nil
	case creds.secret(pub.Type) == "":
		return "", errors.New("webhook sink: stored auth has no credential")
	case pub.Type == AuthBasic:
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(pub.Username+":"+creds.Password)), nil
	case pub.Type == AuthBearer:
		return "Bearer " + creds.Token, nil
	}
	return "", nil
}

// Reads show the auth's password or token masked inside sink.auth, where
// it was given, so a read is a sink object Parse takes back as it is.
var _ sink.CredentialMasker = (*Type)(nil)

// MaskCredentials shows the stored configuration with the auth's secret
// as sink.Masked.
func (t *Type) MaskCredentials(public json.RawMessage, credentialFields []string) (map[string]any, error) {
	view := map[string]any{}
	if err := json.Unmarshal(public, &view); err != nil || view == nil {
		return nil, errors.New("webhook sink: stored configuration is not a JSON object")
	}
	auth, ok := view["auth"].(map[string]any)
	if !ok {
		return view, nil
	}
	authType, _ := auth["type"].(string)
	if field := secretField(authType); slices.Contains(credentialFields, field) {
		auth[field] = sink.Masked
	}
	return view, nil
}

// RestoreMasked puts the current password or token back where raw sends
// the mask. It is carried over only to the same destination, auth type and
// user name: the receiver gets the credential itself, so a caller who may
// change the sink but not read its credential must not be able to send it
// to a server of their own.
func (t *Type) RestoreMasked(raw json.RawMessage, current *sink.Config) (json.RawMessage, error) {
	var fields, auth map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil || json.Unmarshal(fields["auth"], &auth) != nil || auth == nil {
		return raw, nil // Parse says what is wrong with it
	}
	var authType, target string
	_ = json.Unmarshal(auth["type"], &authType)
	field := secretField(authType)
	if !isMasked(auth[field]) {
		return raw, nil
	}
	refuse := func(why string) error {
		return &sink.FieldError{Field: "sink.auth." + field, Message: field + " is " + strconv.Quote(sink.Masked) +
			", the mask reads show in its place, " + why + ": send the " + field + " itself"}
	}
	if current == nil || len(current.Credentials) == 0 {
		return nil, refuse("and there is no current one for it to keep")
	}
	var pub publicConfig
	var creds authCredentials
	if json.Unmarshal(current.Public, &pub) != nil || json.Unmarshal(current.Credentials, &creds) != nil {
		return nil, errors.New("webhook sink: stored configuration or credentials are not JSON objects")
	}
	var given publicAuth
	_ = json.Unmarshal(fields["auth"], &given) // the secret's field is not in it
	_ = json.Unmarshal(fields["url"], &target)
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return raw, nil // Parse says what is wrong with the url
	}
	if pub.Auth == nil || !sameIdentity(pub.Auth, &given) || Destination(u) != current.Destination {
		return nil, refuse("which keeps the current one only for the same destination, auth type and identity (user name, token URL and client id, or client certificate)")
	}
	secret := creds.secret(authType)
	if auth[field], err = json.Marshal(secret); err != nil {
		return nil, &sink.FieldError{Field: "sink.auth", Message: "cannot be stored"}
	}
	if fields["auth"], err = json.Marshal(auth); err != nil {
		return nil, &sink.FieldError{Field: "sink.auth", Message: "cannot be stored"}
	}
	restored, err := json.Marshal(fields)
	if err != nil {
		return nil, &sink.FieldError{Field: "sink", Message: "cannot be stored"}
	}
	return restored, nil
}

func isMasked(value json.RawMessage) bool {
	var text string
	return json.Unmarshal(value, &text) == nil && text == sink.Masked
}
