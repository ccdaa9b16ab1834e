package events

import (
	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
)

// sampleData is a realistic payload per event key the platform's ledger
// emits, so a triggered event exercises filters and receivers the way a
// real one does. Keys without one get genericSample.
var sampleData = map[string]string{
	"transaction.posted":     `{"id":"0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b","description":"Invoice 1042","status":"APPROVED","amount":1000,"asset_code":"USD","source":["@external/USD"],"destination":["@acme/checking"]}`,
	"transaction.created":    `{"id":"0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b","description":"Invoice 1042","status":"PENDING","amount":1000,"asset_code":"USD"}`,
	"account.created":        `{"id":"0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6c","alias":"@acme/checking","name":"Checking","type":"deposit","asset_code":"USD","status":"ACTIVE"}`,
	"balance.config-changed": `{"account_id":"0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6c","asset_code":"USD","allow_sending":true,"allow_receiving":false}`,
}

// genericSample is the payload of a key with no sample of its own.
const genericSample = `{"id":"0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6d","status":"ACTIVE","created_at":"2026-01-01T00:00:00Z","metadata":{"origin":"hubctl events trigger"}}`

// NewCmdTrigger returns `hubctl events trigger`; a non-nil runF replaces
// the real run. It is produce with the data chosen for the key.
func NewCmdTrigger(f *cmdutil.Factory, runF func(*ProduceOptions) error) *cobra.Command {
	in := produceInput{ContentType: "application/json", SchemaVersion: "1.0.0", TypeGivenAs: "event key"}
	cmd := &cobra.Command{
		Use:   "trigger EVENT-KEY [--tenant T]",
		Short: "Publish a sample CloudEvent of a type to Kafka",
		Long: `Publish one well-formed CloudEvent of the given key (<resourcetype>.<eventtype>)
with a realistic sample payload, to try a subscription or receiver without
composing data: the way events produce does, to the same default topic, with
the same connection settings (STREAMING_HUB_KAFKA_*, --brokers) and the same
defaults (the active context's brokers and tenant, which hubctl dev stores). Known
keys (transaction.posted, transaction.created, account.created,
balance.config-changed) get a payload of their own, any other a generic one.
The event id is printed on stdout.`,
		Example: `  hubctl events trigger transaction.posted   # next to hubctl dev
  hubctl events trigger transaction.posted --tenant acme
  hubctl events trigger account.created --tenant acme --brokers 127.0.0.1:9092`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, tenant, err := resolveKafka(f, true)
			if err != nil {
				return err
			}
			in.Tenant = tenant
			in.Type = args[0]
			in.Data = []byte(sampleFor(in.Type))
			tmpl, err := newTemplate(in, cfg.Ingest.TypePrefix)
			if err != nil {
				return &cmdutil.ExitError{Code: cmdutil.ExitUsage, Err: err}
			}
			opts := &ProduceOptions{Factory: f, Config: cfg, Count: 1, tmpl: tmpl}
			return cmdutil.Run(cmd.Context(), opts, runF, produceRun)
		},
	}
	fl := cmd.Flags()
	fl.StringSlice("brokers", nil, BrokersUsage)
	cmdutil.MustBindFlag(fl, "brokers", envBrokers)
	fl.String(hubaccess.FlagTenant, "", tenantUsage)
	fl.StringVar(&in.Source, "source", "midaz", "producing service (ce-source, and part of the type and topic)")
	return cmd
}

func sampleFor(key string) string {
	if data, ok := sampleData[key]; ok {
		return data
	}
	return genericSample
}
