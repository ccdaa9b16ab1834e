package subs

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/filter"
	"github.com/hubctl/hubctl/internal/jsonpos"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// maxEventFileBytes bounds --event: the hub's largest event, plus the
// attributes around it.
const maxEventFileBytes = 2 << 20

// TestFilterOptions are `hubctl subs test-filter`'s checked flags.
type TestFilterOptions struct {
	Factory *cmdutil.Factory
	Filter  string
	Event   filter.Event
	// EventID, when set, names a stored event to test against instead of
	// Event: it is read from the hub at run time.
	EventID string
}

// NewCmdTestFilter returns `hubctl subs test-filter`; a non-nil runF
// replaces the real run.
func NewCmdTestFilter(f *cmdutil.Factory, runF func(*TestFilterOptions) error) *cobra.Command {
	var expr, eventArg, eventID string
	cmd := &cobra.Command{
		Use:   "test-filter --filter EXPR (--event @FILE | --event-id ID)",
		Short: "Try a filter expression on one event, locally",
		Long: `Compile a subscription filter as the hub does and evaluate it on one event,
without a hub or a database. The event is a CloudEvent in JSON (structured
mode): id, source, type, time, subject, datacontenttype, schemaversion,
resourcetype, eventtype, tenantid and data. The filter's variables are id,
source, type (the event key, <resourcetype>.<eventtype>), ce_type (the
CloudEvents type), subject, time, schema_version, tenant_id and data (the
data when it is JSON, absent otherwise). The file may also be a stored event
as hubctl events get -o json prints it. --event-id reads that stored event
from the hub instead (through the API or the database, as events get does).

Prints "match" and exits 0, or prints "no match" (with the evaluation
error, which the hub counts as no match) and exits 1. A filter the hub would
refuse exits 2 with its position.`,
		Example: `  hubctl subs test-filter --filter 'type == "transaction.posted" && data.amount > 100' --event @event.json
  hubctl subs test-filter --filter 'subject.startsWith("acct-")' --event - < event.json
  hubctl subs test-filter --filter 'data.amount > 100' --event-id 0190b6a2-7c1e-7d3a-9f00-00000000002a`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fromFile, fromHub := cmd.Flags().Changed("event"), cmd.Flags().Changed("event-id")
			if !cmd.Flags().Changed("filter") || fromFile == fromHub {
				return cmdutil.UsageErrorf("--filter is required, and one of --event or --event-id")
			}
			if fromHub {
				if strings.TrimSpace(eventID) == "" {
					return cmdutil.UsageErrorf("--event-id must not be empty")
				}
				opts := &TestFilterOptions{Factory: f, Filter: expr, EventID: eventID}
				return cmdutil.Run(cmd.Context(), opts, runF, testFilterRun)
			}
			raw, err := readEventArg(eventArg, f.IOStreams.In)
			if err != nil {
				return err
			}
			ev, err := parseEventFile(raw)
			if err != nil {
				return cmdutil.UsageErrorf("invalid --event: %v", err)
			}
			opts := &TestFilterOptions{Factory: f, Filter: expr, Event: ev}
			return cmdutil.Run(cmd.Context(), opts, runF, testFilterRun)
		},
	}
	cmd.Flags().StringVar(&expr, "filter", "", "the CEL expression, as subs create --filter takes it")
	cmd.Flags().StringVar(&eventArg, "event", "", "the event: @FILE, or - for stdin")
	cmd.Flags().StringVar(&eventID, "event-id", "", "the id of a stored event to test against (as events get takes it)")
	return cmd
}

func testFilterRun(ctx context.Context, opts *TestFilterOptions) error {
	out := opts.Factory.IOStreams.Out
	prg, err := filter.Compile(opts.Filter)
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitUsage, err)
	}
	ev := opts.Event
	if opts.EventID != "" {
		stored, err := hubaccess.CallForTenant(ctx, opts.Factory, func(h hubapi.ControlPlane, tenant string) (hubapi.EventDetail, error) {
			return h.GetEvent(ctx, tenant, opts.EventID)
		})
		if err != nil {
			return err
		}
		if ev, err = storedEvent(stored.InboxEvent); err != nil {
			return fmt.Errorf("event %s: %w", opts.EventID, err)
		}
	}
	ok, err := prg.Matches(filter.NewInput(ev))
	switch {
	case err != nil:
		fmt.Fprintf(out, "no match: %v\n", err)
		return cmdutil.SilentExit(cmdutil.ExitFailure)
	case !ok:
		fmt.Fprintln(out, "no match")
		return cmdutil.SilentExit(cmdutil.ExitFailure)
	}
	_, err = fmt.Fprintln(out, "match")
	return err
}

func readEventArg(arg string, stdin io.Reader) ([]byte, error) {
	var r io.Reader
	switch {
	case arg == "-":
		r = stdin
	case strings.HasPrefix(arg, "@") && len(arg) > 1:
		file, err := os.Open(arg[1:])
		if err != nil {
			return nil, cmdutil.UsageErrorf("invalid --event: %v", err)
		}
		defer file.Close()
		r = file
	default:
		return nil, cmdutil.UsageErrorf("invalid --event %q: give @FILE or - for stdin", arg)
	}
	raw, err := io.ReadAll(io.LimitReader(r, maxEventFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read --event: %w", err)
	}
	if len(raw) > maxEventFileBytes {
		return nil, cmdutil.UsageErrorf("invalid --event: more than %d bytes", maxEventFileBytes)
	}
	return raw, nil
}

// eventFile is a CloudEvent in structured JSON with the hub's extensions.
type eventFile struct {
	ID              string          `json:"id"`
	Source          string          `json:"source"`
	Type            string          `json:"type"`
	Time            string          `json:"time"`
	Subject         string          `json:"subject"`
	DataContentType string          `json:"datacontenttype"`
	SchemaVersion   string          `json:"schemaversion"`
	ResourceType    string          `json:"resourcetype"`
	EventType       string          `json:"eventtype"`
	TenantID        string          `json:"tenantid"`
	Data            json.RawMessage `json:"data"`
	DataBase64      []byte          `json:"data_base64"`
	SpecVersion     string          `json:"specversion"`
	DataSchema      string          `json:"dataschema"`
}

// parseEventFile reads the event strictly: a misspelt attribute would
// otherwise test a filter against an event that is not the one meant. A
// document with a seq is a stored event as events get prints it.
func parseEventFile(raw []byte) (filter.Event, error) {
	var probe struct {
		Seq *json.RawMessage `json:"seq"`
	}
	if json.Unmarshal(raw, &probe) == nil && probe.Seq != nil {
		return parseStoredEvent(raw)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var f eventFile
	if err := dec.Decode(&f); err != nil {
		return filter.Event{}, errors.New(jsonpos.Describe(err, raw))
	}
	if dec.More() {
		return filter.Event{}, errors.New("unexpected data after the JSON object")
	}
	ev := filter.Event{
		ID: f.ID, Source: f.Source, Type: f.Type, Subject: f.Subject, SchemaVersion: f.SchemaVersion,
		TenantID: f.TenantID, DataContentType: f.DataContentType, Data: f.Data,
	}
	if f.ResourceType != "" || f.EventType != "" {
		ev.Key = f.ResourceType + "." + f.EventType
	}
	if f.DataBase64 != nil {
		ev.Data = f.DataBase64
	}
	if f.Time != "" {
		t, err := time.Parse(time.RFC3339Nano, f.Time)
		if err != nil {
			return filter.Event{}, fmt.Errorf("time: %v", err)
		}
		ev.Time = t.UTC()
	}
	return ev, nil
}

// parseStoredEvent reads events get -o json's output, as strictly as the
// CloudEvent form.
func parseStoredEvent(raw []byte) (filter.Event, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var stored hubapi.EventDetail
	if err := dec.Decode(&stored); err != nil {
		return filter.Event{}, errors.New(jsonpos.Describe(err, raw))
	}
	if dec.More() {
		return filter.Event{}, errors.New("unexpected data after the JSON object")
	}
	return storedEvent(stored.InboxEvent)
}

// storedEvent is what the filter sees of a stored event: the attributes
// ingest parsed, and the payload as it arrived (a base64 payload is bytes
// that are not JSON, which the filter's data leaves absent).
func storedEvent(e hubapi.InboxEvent) (filter.Event, error) {
	ev := filter.Event{
		ID: e.ID, Source: e.Source, Key: e.Type, Type: e.CEType, Subject: e.Subject, Time: e.Time.UTC(),
		SchemaVersion: e.SchemaVersion, TenantID: e.TenantID, DataContentType: e.DataContentType, Data: e.Payload,
	}
	if e.PayloadEncoding == "base64" {
		var encoded string
		if err := json.Unmarshal(e.Payload, &encoded); err != nil {
			return filter.Event{}, fmt.Errorf("payload: %v", err)
		}
		data, err := base64.StdEncoding.DecodeString(encoded)
		if err != nil {
			return filter.Event{}, fmt.Errorf("payload: %v", err)
		}
		ev.Data = data
	}
	return ev, nil
}
