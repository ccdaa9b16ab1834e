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
	"github.com/hubctl/hubctl/internal/jsonpos"
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

// updateDocument is a --from-file document of an update: the body to send
// and the subscription the document names itself, if it does.
type updateDocument struct {
	Body hubapi.SubscriptionUpdate
	// ID is the document's own id ("" when it has none): a read sent back
	// has one, a PATCH body need not.
	ID     string
	source string
}

// readUpdateFile reads the --from-file body of an update ("-" meaning
// standard input): a PATCH body, or a whole subscription as get -o json
// prints it.
func readUpdateFile(f *cmdutil.Factory, path string) (updateDocument, error) {
	if path == "-" {
		return decodeUpdate(f.IOStreams.In, "standard input")
	}
	file, err := os.Open(path)
	if err != nil {
		return updateDocument{}, cmdutil.UsageErrorf("--%s: %v", flagFromFile, err)
	}
	defer file.Close()
	return decodeUpdate(file, path)
}

// decodeUpdate turns a document into an update. The fields only the hub
// sets are dropped, so that what a read shows can be edited and sent back;
// what remains is decoded as strictly as any body, so a misspelt field
// still stops the update. The document's id is kept aside for checkFor.
func decodeUpdate(r io.Reader, source string) (updateDocument, error) {
	raw, err := io.ReadAll(r)
	if err != nil {
		return updateDocument{}, fmt.Errorf("read %s: %w", source, err)
	}
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&fields); err != nil {
		return updateDocument{}, cmdutil.UsageErrorf("invalid %s: %s", source, jsonpos.Describe(err, raw))
	}
	if fields == nil {
		return updateDocument{}, cmdutil.UsageErrorf("invalid %s: the body must be a JSON object", source)
	}
	if dec.More() {
		return updateDocument{}, cmdutil.UsageErrorf("invalid %s: unexpected data after the JSON object", source)
	}
	doc := updateDocument{source: source}
	if doc.ID, err = documentID(fields, source); err != nil {
		return updateDocument{}, err
	}
	for _, name := range readOnlyFields {
		delete(fields, name)
	}
	writable, err := json.Marshal(fields)
	if err != nil {
		return updateDocument{}, cmdutil.UsageErrorf("invalid %s: %v", source, err)
	}
	return doc, decodeBody(bytes.NewReader(writable), source, &doc.Body)
}

// documentID is the document's id field, "" when it has none.
func documentID(fields map[string]json.RawMessage, source string) (string, error) {
	raw, present := fields["id"]
	if !present {
		return "", nil
	}
	var value any
	_ = json.Unmarshal(raw, &value) // raw is valid JSON: the document decoded
	id, isString := value.(string)
	if !isString {
		return "", cmdutil.UsageErrorf("invalid %s: id must be a string", source)
	}
	return id, nil
}

// checkFor refuses a document that names a subscription other than id:
// applying another subscription's settings, its sink among them, because
// a file was mixed up is worse than refusing. UUIDs are compared without
// regard to case, as the hub parses them.
func (d updateDocument) checkFor(id string) error {
	if d.ID == "" || strings.EqualFold(d.ID, id) {
		return nil
	}
	return cmdutil.UsageErrorf("%s is subscription %s, not %s: refusing to apply one subscription's settings to another (remove id from the file to apply them anyway)", d.source, d.ID, id)
}
