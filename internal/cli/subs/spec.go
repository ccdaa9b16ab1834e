package subs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/jsonpos"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// Flag names of the writable fields, shared by create and update.
const (
	flagName           = "name"
	flagType           = "type"
	flagURL            = "url"
	flagEventTypes     = "event-types"
	flagSchemaMajor    = "schema-major"
	flagOrigin         = "origin"
	flagFilter         = "filter"
	flagOrdering       = "ordering"
	flagRateLimit      = "rate-limit"
	flagRetrySchedule  = "retry-schedule"
	flagAttemptTimeout = "attempt-timeout"
	flagDisabled       = "disabled"
	flagSigningSecret  = "signing-secret"
	flagScheme         = "signature-scheme"
	flagFromFile       = "from-file"
)

// fieldFlags are the flags --from-file replaces.
var fieldFlags = []string{flagName, flagType, flagURL, flagEventTypes, flagSchemaMajor, flagOrigin,
	flagFilter, flagOrdering, flagRateLimit, flagRetrySchedule, flagAttemptTimeout, flagDisabled, flagSigningSecret, flagScheme}

// specFlags are the writable fields of a subscription as flags.
type specFlags struct {
	name           string
	sinkType       string
	url            string
	eventTypes     []string
	schemaMajor    int
	origin         string
	filter         string
	ordering       string
	rateLimit      float64
	retrySchedule  []string
	attemptTimeout string
	disabled       bool
	signingSecret  string
	scheme         string
	fromFile       string
}

func (s *specFlags) register(fs *pflag.FlagSet, forUpdate bool) {
	fs.StringVar(&s.name, flagName, "", "subscription name")
	fs.StringVar(&s.sinkType, flagType, "", "sink type: webhook or pull (other sinks: --from-file)")
	fs.StringVar(&s.url, flagURL, "", "webhook URL")
	fs.StringSliceVar(&s.eventTypes, flagEventTypes, []string{"*"}, `event types to deliver: "*", "<resource>.*" or "<resource>.<event>", comma-separated`)
	fs.IntVar(&s.schemaMajor, flagSchemaMajor, 1, "major version of the event schema to deliver")
	fs.StringVar(&s.origin, flagOrigin, "", "deliver only events from this source")
	fs.StringVar(&s.filter, flagFilter, "", "deliver only events this CEL expression holds for, e.g. 'data.amount > 100' (try one with subs test-filter)")
	fs.StringVar(&s.ordering, flagOrdering, "none", `deliver in seq order, one at a time per key: "none", "tenant" or "subject" (a failing delivery holds its key's later ones)`)
	fs.Float64Var(&s.rateLimit, flagRateLimit, 0, "at most this many deliveries per second, across every hub (0: no limit)")
	fs.StringSliceVar(&s.retrySchedule, flagRetrySchedule, nil, "delays between attempts, e.g. 0s,5s,1m,10m (1-12 steps, each at most 10h)")
	fs.StringVar(&s.attemptTimeout, flagAttemptTimeout, "", "timeout of one delivery attempt, 1s-60s (default 10s)")
	fs.BoolVar(&s.disabled, flagDisabled, false, "create the subscription disabled")
	fs.StringVar(&s.signingSecret, flagSigningSecret, "", "webhook signing secret, at least 24 characters (default: the hub generates one)")
	fs.StringVar(&s.scheme, flagScheme, "", `how a webhook signs: "lerian" or "standard-webhooks" (default lerian)`)
	fs.StringVar(&s.fromFile, flagFromFile, "", "read the whole request body from this JSON file (- for stdin) instead of the flags")
	if forUpdate {
		// On update an empty value clears the field, and nothing is sent
		// unless the flag is given, so the create defaults must not show.
		fs.Lookup(flagEventTypes).DefValue = "[]"
		fs.Lookup(flagSchemaMajor).DefValue = "0"
		fs.Lookup(flagOrigin).Usage = `deliver only events from this source ("" matches every source)`
		fs.Lookup(flagFilter).Usage = `deliver only events this CEL expression holds for ("" removes the filter)`
		fs.Lookup(flagOrdering).DefValue = ""
		fs.Lookup(flagRateLimit).Usage = "at most this many deliveries per second, across every hub (0 removes the limit)"
		fs.Lookup(flagRetrySchedule).Usage = `delays between attempts, e.g. 0s,5s,1m,10m ("" restores the default)`
		fs.Lookup(flagAttemptTimeout).Usage = "timeout of one delivery attempt, 1s-60s"
		fs.Lookup(flagDisabled).Usage = "disable (--disabled) or enable (--disabled=false) delivery"
		fs.Lookup(flagSigningSecret).Usage = "rotate to this webhook signing secret, at least 24 characters"
		fs.Lookup(flagScheme).Usage = `switch how the webhook signs: "lerian" or "standard-webhooks"; rotates the signing secret (to --signing-secret when given)`
		fs.Lookup(flagFromFile).Usage = "read the request body, or a subscription as get -o json prints it, from this JSON file (- for stdin) instead of the flags"
	}
}

// checkFromFile rejects --from-file together with field flags: which of
// two values would win is not something a user should have to guess.
func checkFromFile(fs *pflag.FlagSet) error {
	if !fs.Changed(flagFromFile) {
		return nil
	}
	for _, name := range fieldFlags {
		if fs.Changed(name) {
			return cmdutil.UsageErrorf("--%s and --%s cannot be combined: put every field in the file", flagFromFile, name)
		}
	}
	return nil
}

// decodeBody reads a request body from a file strictly: a field the API
// does not know is a mistake worth stopping at, not one to drop silently.
func decodeBody(r io.Reader, source string, dst any) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("read %s: %w", source, err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return cmdutil.UsageErrorf("invalid %s: %s", source, jsonpos.Describe(err, raw))
	}
	if dec.More() {
		return cmdutil.UsageErrorf("invalid %s: unexpected data after the JSON object", source)
	}
	return nil
}

// sinkObject builds the sink of the --type and --url flags.
func sinkObject(sinkType, url string) json.RawMessage {
	fields := map[string]string{"type": sinkType}
	if url != "" {
		fields["url"] = url
	}
	raw, _ := json.Marshal(fields) // a map of strings always encodes
	return raw
}

// fileOnlySinks are the sink types whose settings (queues, regions,
// credentials) have no flags, each with a sink object to start from:
// --type and --url alone would make the hub ask for fields no flag sets.
var fileOnlySinks = map[string]string{
	"sqs": `{"type": "sqs", "queue_url": "https://sqs.us-east-1.amazonaws.com/123456789012/orders",
            "region": "us-east-1", "access_key_id": "AKIA...", "secret_access_key": "..."}`,
	"rabbitmq":    `{"type": "rabbitmq", "url": "amqps://user:pass@mq.example.com/vhost", "exchange": "events"}`,
	"eventbridge": `{"type": "eventbridge", "event_bus": "orders", "region": "us-east-1", "access_key_id": "AKIA...", "secret_access_key": "..."}`,
	"nats":        `{"type": "nats", "url": "tls://nats.example.com:4222", "subject": "orders.events", "credentials": {"token": "..."}}`,
	"s3": `{"type": "s3", "bucket": "orders-archive", "region": "us-east-1", "prefix": "events/",
            "access_key_id": "AKIA...", "secret_access_key": "..."}`,
	"kafka": `{"type": "kafka", "brokers": ["kafka-1.example.com:9093"], "topic": "orders", "tls": true,
            "sasl": {"mechanism": "SCRAM-SHA-512", "username": "hub", "password": "..."}}`,
	"pubsub": `{"type": "pubsub", "project": "acme-prod", "topic": "orders",
            "credentials_json": "{\"type\": \"service_account\", ...}"}`,
}

// createBody is the SubscriptionCreate of the flags. Fields whose flags
// were not given are left to the hub's defaults.
func (s *specFlags) createBody(changed func(string) bool) (hubapi.SubscriptionCreate, error) {
	for _, required := range []string{flagName, flagType} {
		if !changed(required) {
			return hubapi.SubscriptionCreate{}, cmdutil.UsageErrorf("--%s is required (or --%s with the whole subscription)", required, flagFromFile)
		}
	}
	// Given but blank is as good as missing: a subscription nobody can
	// name in a listing, or no sink type at all.
	for flag, value := range map[string]string{flagName: s.name, flagType: s.sinkType} {
		if strings.TrimSpace(value) == "" {
			return hubapi.SubscriptionCreate{}, cmdutil.UsageErrorf("--%s must not be empty", flag)
		}
	}
	if example, needsFile := fileOnlySinks[s.sinkType]; needsFile {
		return hubapi.SubscriptionCreate{}, cmdutil.UsageErrorf("--%s %s needs sink settings no flag gives: pass the whole subscription with --%s instead, e.g.\n"+
			"  hubctl subs create --%s - <<'EOF'\n  {\"name\": %q, \"event_types\": [\"transaction.*\"],\n   \"sink\": %s}\n  EOF",
			flagType, s.sinkType, flagFromFile, flagFromFile, s.name, example)
	}
	in := hubapi.SubscriptionCreate{
		Name:            s.name,
		Sink:            sinkObject(s.sinkType, s.url),
		EventTypes:      s.eventTypes,
		AttemptTimeout:  s.attemptTimeout,
		SigningSecret:   s.signingSecret,
		SignatureScheme: s.scheme,
	}
	if changed(flagSchemaMajor) {
		in.SchemaMajor = &s.schemaMajor
	}
	if changed(flagOrigin) {
		in.Origin = &s.origin
	}
	if changed(flagFilter) {
		in.Filter = &s.filter
	}
	if changed(flagOrdering) {
		in.Ordering = s.ordering
	}
	if changed(flagRateLimit) {
		if s.rateLimit < 0 {
			return hubapi.SubscriptionCreate{}, cmdutil.UsageErrorf("--%s must be a positive number of deliveries per second, or 0 for none", flagRateLimit)
		}
		if s.rateLimit > 0 {
			in.RateLimit = &s.rateLimit
		}
	}
	if changed(flagRetrySchedule) {
		in.RetrySchedule = s.retrySchedule
	}
	if changed(flagDisabled) {
		enabled := !s.disabled
		in.Enabled = &enabled
	}
	return in, nil
}

// updateBody is the SubscriptionUpdate of the flags given, and only of
// those. currentSinkType is the subscription's sink type, needed when only
// --url changes, since a sink is replaced whole.
func (s *specFlags) updateBody(changed func(string) bool, currentSinkType func() (string, error)) (hubapi.SubscriptionUpdate, error) {
	var in hubapi.SubscriptionUpdate
	if changed(flagName) {
		if strings.TrimSpace(s.name) == "" {
			return hubapi.SubscriptionUpdate{}, cmdutil.UsageErrorf("--%s must not be empty", flagName)
		}
		in.Name = &s.name
	}
	if changed(flagType) || changed(flagURL) {
		sinkType := s.sinkType
		if !changed(flagType) {
			var err error
			if sinkType, err = currentSinkType(); err != nil {
				return hubapi.SubscriptionUpdate{}, err
			}
		}
		in.Sink = sinkObject(sinkType, s.url)
	}
	if changed(flagEventTypes) {
		// An empty list would read as "unchanged" on the wire (the field
		// is omitted when empty), so it is refused here.
		if len(s.eventTypes) == 0 {
			return hubapi.SubscriptionUpdate{}, cmdutil.UsageErrorf("--%s needs at least one event type", flagEventTypes)
		}
		in.EventTypes = s.eventTypes
	}
	if changed(flagSchemaMajor) {
		in.SchemaMajor = &s.schemaMajor
	}
	if changed(flagOrigin) {
		in.Origin = hubapi.SetTo(s.origin)
		if s.origin == "" {
			in.Origin = hubapi.SetNull[string]()
		}
	}
	if changed(flagFilter) {
		in.Filter = hubapi.SetTo(s.filter)
		if s.filter == "" {
			in.Filter = hubapi.SetNull[string]()
		}
	}
	if changed(flagOrdering) {
		in.Ordering = &s.ordering
	}
	if changed(flagRateLimit) {
		if s.rateLimit < 0 {
			return hubapi.SubscriptionUpdate{}, cmdutil.UsageErrorf("--%s must be a positive number of deliveries per second, or 0 to remove the limit", flagRateLimit)
		}
		in.RateLimit = hubapi.SetTo(s.rateLimit)
		if s.rateLimit == 0 {
			in.RateLimit = hubapi.SetNull[float64]()
		}
	}
	if changed(flagRetrySchedule) {
		in.RetrySchedule = hubapi.SetTo(s.retrySchedule)
		if len(s.retrySchedule) == 0 {
			in.RetrySchedule = hubapi.SetNull[[]string]()
		}
	}
	if changed(flagAttemptTimeout) {
		in.AttemptTimeout = &s.attemptTimeout
	}
	if changed(flagDisabled) {
		enabled := !s.disabled
		in.Enabled = &enabled
	}
	if changed(flagSigningSecret) {
		in.SigningSecret = &s.signingSecret
	}
	if changed(flagScheme) {
		in.SignatureScheme = &s.scheme
	}
	return in, nil
}
