package sink

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// InvalidError is a sink object the caller must fix, as the API reports it:
// Field names the offending field ("sink", "sink.type", "sink.url", …) and
// Message says what is wrong. Any other error from this file is the hub's
// own fault (a stored configuration it cannot read).
type InvalidError struct {
	Field   string
	Message string
}

func (e *InvalidError) Error() string { return "invalid sink: " + e.Message }

func invalidObject(field, format string, args ...any) *InvalidError {
	return &InvalidError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Object is a sink object of a registered type, not yet parsed.
type Object struct {
	TypeName string
	typ      Type
	raw      json.RawMessage
}

// Parsed is a sink object its type accepted, split the way it is stored.
type Parsed struct {
	TypeName string
	Config   Config
	// CredentialFields are the keys of Config.Credentials, sorted: reads
	// show each of them masked.
	CredentialFields []string
}

// Object finds the type of a sink object (a JSON object with "type").
func (r *Registry) Object(raw json.RawMessage) (Object, error) {
	known := strings.Join(r.names, ", ")
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return Object{}, invalidObject("sink", "must be an object with a type, one of %s", known)
	}
	var typeName string
	if err := json.Unmarshal(fields["type"], &typeName); err != nil || typeName == "" {
		return Object{}, invalidObject("sink.type", "type must be one of %s", known)
	}
	t, ok := r.types[typeName]
	if !ok {
		return Object{}, invalidObject("sink.type", "type %q is not one of %s", typeName, known)
	}
	return Object{TypeName: typeName, typ: t, raw: raw}, nil
}

// Parse has the object's type validate and split it. current is the
// configuration it replaces, credentials decrypted, or nil on create: a
// credential sent back as the mask reads show stands for its current value,
// and on create for nothing, so it is refused rather than stored as the
// credential.
func (o Object) Parse(current *Config) (Parsed, error) {
	var fieldErr *FieldError
	raw, err := restoreMasked(o.typ, o.raw, current)
	if errors.As(err, &fieldErr) {
		return Parsed{}, &InvalidError{Field: fieldErr.Field, Message: fieldErr.Error()}
	}
	if err != nil {
		return Parsed{}, fmt.Errorf("sink type %s: %w", o.TypeName, err)
	}
	cfg, err := o.typ.Parse(raw)
	if err != nil {
		if errors.As(err, &fieldErr) && fieldErr.Field != "" {
			return Parsed{}, &InvalidError{Field: fieldErr.Field, Message: fieldErr.Error()}
		}
		return Parsed{}, invalidObject("sink", "%v", err)
	}
	// jsonb cannot hold a NUL in a string, and a value it rejects would
	// surface as a server error rather than as the user's mistake.
	if !isJSONObject(cfg.Public) || containsNUL(cfg.Public) || containsNUL(cfg.Credentials) {
		return Parsed{}, invalidObject("sink", "values must not contain NUL characters")
	}
	fields, err := credentialFields(cfg.Credentials)
	var invalid *InvalidError
	if err != nil && !errors.As(err, &invalid) {
		err = fmt.Errorf("sink type %s: %w", o.TypeName, err)
	}
	if err != nil {
		return Parsed{}, err
	}
	return Parsed{TypeName: o.TypeName, Config: cfg, CredentialFields: fields}, nil
}

// credentialFields lists the keys of a type's credentials, refusing a
// credential that is the mask itself: it can only be a read sent back where
// no credential stands behind it.
func credentialFields(raw json.RawMessage) ([]string, error) {
	if raw == nil {
		return nil, nil
	}
	var credentials map[string]json.RawMessage
	if err := json.Unmarshal(raw, &credentials); err != nil || credentials == nil {
		return nil, errors.New("credentials are not a JSON object")
	}
	fields := make([]string, 0, len(credentials))
	for field := range credentials {
		fields = append(fields, field)
	}
	slices.Sort(fields)
	for _, field := range fields {
		if isMasked(credentials[field]) {
			return nil, invalidObject("sink."+field, "%s is %q, which reads show in place of a credential: send the credential itself (an update may send the mask back to keep the current one)", field, Masked)
		}
	}
	return fields, nil
}

// Show is the sink object as reads show it: the public configuration, its
// type, and the mask for each credential: in its place, for a type that
// keeps credentials inside another field (CredentialMasker), else as a
// field of its own, unless the public part already describes it in a
// credential-free form. Either way it is an object the type's Parse takes
// back as it is.
func (r *Registry) Show(typeName string, public json.RawMessage, credentialFields []string) (map[string]any, error) {
	var view map[string]any
	if masker, ok := r.types[typeName].(CredentialMasker); ok {
		var err error
		if view, err = masker.MaskCredentials(public, credentialFields); err != nil {
			return nil, err
		}
	}
	if view == nil {
		if err := json.Unmarshal(public, &view); err != nil || view == nil {
			return nil, errors.New("stored sink configuration is not a JSON object")
		}
		for _, field := range credentialFields {
			if _, shown := view[field]; !shown {
				view[field] = Masked
			}
		}
	}
	view["type"] = typeName
	return view, nil
}

// Differs reports whether next configures something other than c, the
// stored configuration with its credentials decrypted. Both sides are
// compared as JSON values: jsonb does not keep the layout Parse produced.
func (c Config) Differs(next Config) bool {
	if c.Destination != next.Destination || !sameJSON(c.Public, next.Public) {
		return true
	}
	if c.Credentials == nil || next.Credentials == nil {
		return (c.Credentials == nil) != (next.Credentials == nil)
	}
	return !sameJSON(c.Credentials, next.Credentials)
}

func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// restoreMasked returns raw with the credentials it sends as the mask
// replaced by current's values, in memory only, for Parse to validate and
// split as if the caller had sent them. A type whose credentials are fields
// of their own gets the generic treatment: a field of current's credentials
// sent as the mask takes its current value.
func restoreMasked(t Type, raw json.RawMessage, current *Config) (json.RawMessage, error) {
	if masker, ok := t.(CredentialMasker); ok {
		return masker.RestoreMasked(raw, current)
	}
	if current == nil || current.Credentials == nil {
		return raw, nil
	}
	var fields, credentials map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return raw, nil // Parse says what is wrong with it
	}
	if err := json.Unmarshal(current.Credentials, &credentials); err != nil {
		return nil, errors.New("stored sink credentials are not a JSON object")
	}
	restored := false
	for field, value := range credentials {
		if isMasked(fields[field]) {
			fields[field], restored = value, true
		}
	}
	if !restored {
		return raw, nil
	}
	return json.Marshal(fields)
}

// isMasked reports whether a JSON value is the string reads show in place
// of a credential.
func isMasked(value json.RawMessage) bool {
	var text string
	return json.Unmarshal(value, &text) == nil && text == Masked
}

func isJSONObject(raw json.RawMessage) bool {
	var object map[string]json.RawMessage
	return json.Unmarshal(raw, &object) == nil && object != nil
}

// containsNUL reports whether any string in a JSON value, key or element,
// holds a NUL character.
func containsNUL(raw json.RawMessage) bool {
	if raw == nil {
		return false
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case string:
			return strings.ContainsRune(v, 0)
		case []any:
			return slices.ContainsFunc(v, walk)
		case map[string]any:
			for k, e := range v {
				if strings.ContainsRune(k, 0) || walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}
