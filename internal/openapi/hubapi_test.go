package openapi

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// wireTypes maps each body type of pkg/hubapi to its schema in the
// document. The Go client and the CLI encode and decode with these types,
// so they and the schemas must name the same fields.
var wireTypes = map[string]struct {
	schema string
	typ    reflect.Type
}{
	"APIKey":                     {"APIKey", reflect.TypeFor[hubapi.APIKey]()},
	"CreatedAPIKey":              {"CreatedAPIKey", reflect.TypeFor[hubapi.CreatedAPIKey]()},
	"APIKeyCreate":               {"APIKeyCreate", reflect.TypeFor[hubapi.APIKeyCreate]()},
	"DeadLetter":                 {"DeadLetter", reflect.TypeFor[hubapi.DeadLetter]()},
	"DeadLetterReplay":           {"DeadLetterReplay", reflect.TypeFor[hubapi.DeadLetterReplay]()},
	"DeadLetterReplayResult":     {"DeadLetterReplayResult", reflect.TypeFor[hubapi.DeadLetterReplayResult]()},
	"Delivery":                   {"Delivery", reflect.TypeFor[hubapi.Delivery]()},
	"DeliveryDetail":             {"DeliveryDetail", reflect.TypeFor[hubapi.DeliveryDetail]()},
	"DeliveryAttempt":            {"DeliveryAttempt", reflect.TypeFor[hubapi.DeliveryAttempt]()},
	"AttemptLatency":             {"AttemptLatency", reflect.TypeFor[hubapi.AttemptLatency]()},
	"LatencyHour":                {"LatencyHour", reflect.TypeFor[hubapi.LatencyHour]()},
	"DeliveryCounts":             {"DeliveryCounts", reflect.TypeFor[hubapi.DeliveryCounts]()},
	"SubscriptionDeliveryCounts": {"SubscriptionDeliveryCounts", reflect.TypeFor[hubapi.SubscriptionDeliveryCounts]()},
	"Error":                      {"Error", reflect.TypeFor[hubapi.Error]()},
	"InboxEvent":                 {"InboxEvent", reflect.TypeFor[hubapi.InboxEvent]()},
	"EventDetail":                {"EventDetail", reflect.TypeFor[hubapi.EventDetail]()},
	"EventDelivery":              {"EventDelivery", reflect.TypeFor[hubapi.EventDelivery]()},
	"PortalLinkCreate":           {"PortalLinkCreate", reflect.TypeFor[hubapi.PortalLinkCreate]()},
	"PortalLink":                 {"PortalLink", reflect.TypeFor[hubapi.PortalLink]()},
	"PortalSessionsEnded":        {"PortalSessionsEnded", reflect.TypeFor[hubapi.PortalSessionsEnded]()},
	"PullPage":                   {"PullPage", reflect.TypeFor[hubapi.PullPage]()},
	"PullEvent":                  {"PullEvent", reflect.TypeFor[hubapi.PullEvent]()},
	"QuarantineItem":             {"QuarantineItem", reflect.TypeFor[hubapi.QuarantineItem]()},
	"QuarantineSummary":          {"QuarantineSummary", reflect.TypeFor[hubapi.QuarantineSummary]()},
	"QuarantineHeader":           {"QuarantineHeader", reflect.TypeFor[hubapi.QuarantineHeader]()},
	"SubscriptionRecover":        {"SubscriptionRecover", reflect.TypeFor[hubapi.SubscriptionRecover]()},
	"SubscriptionRecoverResult":  {"SubscriptionRecoverResult", reflect.TypeFor[hubapi.SubscriptionRecoverResult]()},
	"StorageStatus":              {"StorageStatus", reflect.TypeFor[hubapi.StorageStatus]()},
	"StorageRetention":           {"StorageRetention", reflect.TypeFor[hubapi.StorageRetention]()},
	"StorageTable":               {"StorageTable", reflect.TypeFor[hubapi.StorageTable]()},
	"StoragePrunable":            {"StoragePrunable", reflect.TypeFor[hubapi.StoragePrunable]()},
	"StorageKept":                {"StorageKept", reflect.TypeFor[hubapi.StorageKept]()},
	"StoragePruneRequest":        {"StoragePruneRequest", reflect.TypeFor[hubapi.StoragePruneRequest]()},
	"StoragePruneResult":         {"StoragePruneResult", reflect.TypeFor[hubapi.StoragePruneResult]()},
	"StorageRemoval":             {"StorageRemoval", reflect.TypeFor[hubapi.StorageRemoval]()},
	"TenantPurgeResult":          {"TenantPurgeResult", reflect.TypeFor[hubapi.TenantPurgeResult]()},
	"PurgedTable":                {"PurgedTable", reflect.TypeFor[hubapi.PurgedTable]()},
	"Subscription":               {"Subscription", reflect.TypeFor[hubapi.Subscription]()},
	"Rate":                       {"Rate", reflect.TypeFor[hubapi.Rate]()},
	"Breaker":                    {"Breaker", reflect.TypeFor[hubapi.Breaker]()},
	"SubscriptionCreate":         {"SubscriptionCreate", reflect.TypeFor[hubapi.SubscriptionCreate]()},
	"SubscriptionUpdate":         {"SubscriptionUpdate", reflect.TypeFor[hubapi.SubscriptionUpdate]()},
	"UpdatedSubscription":        {"UpdatedSubscription", reflect.TypeFor[hubapi.UpdatedSubscription]()},
	"SecretRotation":             {"SecretRotation", reflect.TypeFor[hubapi.SecretRotation]()},
	"CreatedSubscription":        {"CreatedSubscription", reflect.TypeFor[hubapi.CreatedSubscription]()},
	"SecretRotate":               {"SecretRotate", reflect.TypeFor[hubapi.SecretRotate]()},
	"SubscriptionDeleted":        {"SubscriptionDeleted", reflect.TypeFor[hubapi.SubscriptionDeleted]()},
	"Tenant":                     {"Tenant", reflect.TypeFor[hubapi.Tenant]()},
	"TenantCreate":               {"TenantCreate", reflect.TypeFor[hubapi.TenantCreate]()},
	"TenantUpdate":               {"TenantUpdate", reflect.TypeFor[hubapi.TenantUpdate]()},
}

// pages maps each listing's schema to the Page instance it decodes into.
var pages = map[string]reflect.Type{
	"TenantPage":       reflect.TypeFor[hubapi.Page[hubapi.Tenant]](),
	"APIKeyPage":       reflect.TypeFor[hubapi.Page[hubapi.APIKey]](),
	"QuarantinePage":   reflect.TypeFor[hubapi.Page[hubapi.QuarantineSummary]](),
	"SubscriptionPage": reflect.TypeFor[hubapi.Page[hubapi.Subscription]](),
	"DeliveryPage":     reflect.TypeFor[hubapi.Page[hubapi.Delivery]](),
	"InboxEventPage":   reflect.TypeFor[hubapi.Page[hubapi.InboxEvent]](),
	"DeadLetterPage":   reflect.TypeFor[hubapi.Page[hubapi.DeadLetter]](),
}

// notBodies are exported struct types of pkg/hubapi that are no body of
// their own: parts embedded in others, checked there; the PATCH field
// wrapper; the control plane's parameters, which travel as query strings;
// who is calling; and the errors, which travel as the Error schema's code
// and message.
var notBodies = map[string]bool{
	"QuarantineOrigin": true, "QuarantineValue": true, "Nullable": true, "Page": true,
	"ListParams": true, "QuarantineListParams": true, "DeliveryListParams": true, "DeadLetterFilter": true,
	"DeadLetterListParams": true, "EventFilter": true, "EventListParams": true, "PullParams": true,
	"Caller":          true,
	"ValidationError": true, "ForbiddenError": true, "NotFoundError": true, "ConflictError": true, "UnprocessableError": true,
}

// TestHubapiTypesMatchTheDocument: every JSON field of every wire type of
// pkg/hubapi is a property of its schema, and every property of the schema
// is a field of the type, so the Go types and the contract cannot drift.
func TestHubapiTypesMatchTheDocument(t *testing.T) {
	raw, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range exportedStructs(t, "../../pkg/hubapi") {
		if _, ok := wireTypes[name]; !ok && !notBodies[name] {
			t.Errorf("pkg/hubapi.%s is not mapped to a schema in wireTypes", name)
		}
	}
	check := func(goName, schema string, typ reflect.Type) {
		ref := doc.Components.Schemas[schema]
		if ref == nil {
			t.Errorf("%s: the document has no schema %s", goName, schema)
			return
		}
		fields, props := jsonFields(typ), properties(ref.Value)
		for _, f := range difference(fields, props) {
			t.Errorf("%s has the JSON field %q, schema %s has no such property", goName, f, schema)
		}
		for _, p := range difference(props, fields) {
			t.Errorf("schema %s has the property %q, %s has no such JSON field", schema, p, goName)
		}
	}
	for goName, w := range wireTypes {
		check("hubapi."+goName, w.schema, w.typ)
	}
	for schema, typ := range pages {
		check(typ.String(), schema, typ)
	}
}

// exportedStructs lists the exported struct types declared in dir.
func exportedStructs(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			if spec, ok := n.(*ast.TypeSpec); ok && spec.Name.IsExported() {
				if _, isStruct := spec.Type.(*ast.StructType); isStruct {
					names = append(names, spec.Name.Name)
				}
			}
			return true
		})
	}
	if len(names) == 0 {
		t.Fatalf("no exported struct in %s", dir)
	}
	return names
}

// jsonFields is the set of JSON names encoding/json gives typ's fields,
// embedded structs flattened.
func jsonFields(typ reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		switch {
		case name == "-" || !f.IsExported() && !f.Anonymous:
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			for k := range jsonFields(f.Type) {
				out[k] = true
			}
		case name == "":
			out[f.Name] = true
		default:
			out[name] = true
		}
	}
	return out
}

// properties is the set of a schema's property names, its allOf parts'
// included.
func properties(s *openapi3.Schema) map[string]bool {
	out := map[string]bool{}
	for name := range s.Properties {
		out[name] = true
	}
	for _, part := range s.AllOf {
		for name := range properties(part.Value) {
			out[name] = true
		}
	}
	return out
}

func difference(a, b map[string]bool) []string {
	var out []string
	for k := range a {
		if !b[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
