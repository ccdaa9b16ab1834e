package subs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// readOnlyFields are the fields a read shows that an update cannot set:
// those of Subscription that SubscriptionUpdate lacks. They are derived
// from the two types so that a field the API adds to reads is dropped from
// a read sent back without anyone remembering to list it here.
var readOnlyFields = fieldsOnlyIn(reflect.TypeFor[hubapi.Subscription](), reflect.TypeFor[hubapi.SubscriptionUpdate]())

// fieldsOnlyIn returns the JSON names of read's fields that write does not
// have, in read's order.
func fieldsOnlyIn(read, write reflect.Type) []string {
	writable := jsonFieldNames(write)
	var only []string
	for _, name := range jsonFieldNames(read) {
		if !slices.Contains(writable, name) {
			only = append(only, name)
		}
	}
	return only
}

// jsonFieldNames lists the object keys encoding/json uses for a struct
// type, following its rules for tags, unexported and embedded fields.
func jsonFieldNames(t reflect.Type) []string {
	var names []string
	for field := range t.Fields() {
		tag := field.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if embedded := field.Type; field.Anonymous && name == "" {
			if embedded.Kind() == reflect.Pointer {
				embedded = embedded.Elem()
			}
			if embedded.Kind() == reflect.Struct {
				names = append(names, jsonFieldNames(embedded)...)
				continue
			}
		}
		if !field.IsExported() {
			continue
		}
		if name == "" {
			name = field.Name
		}
		names = append(names, name)
	}
	return names
}

// readUpdateFile reads the --from-file body of an update ("-" meaning
// standard input): a PATCH body, or a whole subscription as get -o json
// prints it.
func readUpdateFile(f *cmdutil.Factory, path, id string) (hubapi.SubscriptionUpdate, error) {
	if path == "-" {
		return decodeUpdate(f.IOStreams.In, "standard input", id)
	}
	file, err := os.Open(path)
	if err != nil {
		return hubapi.SubscriptionUpdate{}, cmdutil.UsageErrorf("--%s: %v", flagFromFile, err)
	}
	defer file.Close()
	return decodeUpdate(file, path, id)
}

// decodeUpdate turns a document into the update of subscription id. The
// fields only the hub sets are dropped, so that what a read shows can be
// edited and sent back; what remains is decoded as strictly as any body,
// so a misspelt field still stops the update. The document's own id, when
// it has one, must be id: applying another subscription's settings, its
// sink among them, because a file was mixed up is worse than refusing.
func decodeUpdate(r io.Reader, source, id string) (hubapi.SubscriptionUpdate, error) {
	raw, err := io.ReadAll(r)
	if err != nil {
		return hubapi.SubscriptionUpdate{}, fmt.Errorf("read %s: %w", source, err)
	}
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&fields); err != nil {
		return hubapi.SubscriptionUpdate{}, cmdutil.UsageErrorf("invalid %s: %v", source, err)
	}
	if fields == nil {
		return hubapi.SubscriptionUpdate{}, cmdutil.UsageErrorf("invalid %s: the body must be a JSON object", source)
	}
	if dec.More() {
		return hubapi.SubscriptionUpdate{}, cmdutil.UsageErrorf("invalid %s: unexpected data after the JSON object", source)
	}
	if err := checkDocumentID(fields, source, id); err != nil {
		return hubapi.SubscriptionUpdate{}, err
	}
	for _, name := range readOnlyFields {
		delete(fields, name)
	}
	writable, err := json.Marshal(fields)
	if err != nil {
		return hubapi.SubscriptionUpdate{}, cmdutil.UsageErrorf("invalid %s: %v", source, err)
	}
	var in hubapi.SubscriptionUpdate
	return in, decodeBody(bytes.NewReader(writable), source, &in)
}

// checkDocumentID refuses a document that names a subscription other than
// id. UUIDs are compared without regard to case, as the hub parses them.
func checkDocumentID(fields map[string]json.RawMessage, source, id string) error {
	raw, present := fields["id"]
	if !present {
		return nil
	}
	var value any
	_ = json.Unmarshal(raw, &value) // raw is valid JSON: the document decoded
	documentID, isString := value.(string)
	if !isString {
		return cmdutil.UsageErrorf("invalid %s: id must be a string", source)
	}
	if !strings.EqualFold(documentID, id) {
		return cmdutil.UsageErrorf("%s is subscription %s, not %s: refusing to apply one subscription's settings to another (remove id from the file to apply them anyway)", source, documentID, id)
	}
	return nil
}
