package subs

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// CreateOptions is `hubctl subs create` parsed: the request body, from the
// field flags or --from-file.
type CreateOptions struct {
	Factory *cmdutil.Factory
	Format  output.Format
	Body    hubapi.SubscriptionCreate
	// AllowDuplicateName creates the subscription even when another live
	// one of the tenant has its name.
	AllowDuplicateName bool
}

// NewCmdCreate returns `hubctl subs create`; a non-nil runF replaces the
// real run.
func NewCmdCreate(f *cmdutil.Factory, runF func(*CreateOptions) error) *cobra.Command {
	var format string
	var spec specFlags
	var allowDuplicateName bool
	cmd := &cobra.Command{
		Use:   "create --name NAME --type TYPE [--url URL] [flags]",
		Short: "Create a subscription and verify its destination",
		Long: `Create a subscription. The hub verifies the destination at once; the answer
shows the outcome in verification_state (a failed probe does not fail the
command: fix the destination and run hubctl subs verify).

A webhook's signing secret is printed once, here: store it now. --from-file
takes the whole request body of POST /v1/subscriptions instead of the field
flags, for sinks with more settings than a URL.

Names are how people address subscriptions (hubctl subs get orders), so a
name another live subscription of the tenant already has is refused (exit
1): from then on the name would be ambiguous everywhere. Pass
--allow-duplicate-name to create it anyway. The check is the CLI's; the API
accepts duplicate names.`,
		Example: `  hubctl subs create --name orders --type webhook --url https://acme.example/hooks \
    --event-types 'transaction.posted,account.*' --retry-schedule 0s,5s,1m,10m
  hubctl subs create --name orders --type webhook --url https://acme.example/hooks --signature-scheme standard-webhooks
  hubctl subs create --name feed --type pull --origin midaz
  hubctl subs create --from-file orders.json -o json

  # SQS, RabbitMQ, EventBridge, NATS, S3, Kafka and Pub/Sub take the request body. Credentials are
  # encrypted at rest and read back as "****" (an update that sends "****"
  # back keeps them):
  hubctl subs create --from-file - <<'EOF'
  {"name": "orders-queue", "event_types": ["transaction.*"],
   "sink": {"type": "sqs", "queue_url": "https://sqs.us-east-1.amazonaws.com/123456789012/orders",
            "region": "us-east-1", "access_key_id": "AKIA...", "secret_access_key": "..."}}
  EOF
  # {"type": "rabbitmq", "url": "amqps://user:pass@mq.example.com/vhost", "exchange": "events"}
  # {"type": "webhook", "url": "https://acme.example/hooks", "headers": {"X-Api-Version": "2"},
  #  "auth": {"type": "bearer", "token": "..."}}
  # {"type": "eventbridge", "event_bus": "orders", "region": "us-east-1", "access_key_id": "AKIA...", "secret_access_key": "..."}
  # {"type": "nats", "url": "tls://nats.example.com:4222", "subject": "orders.events", "credentials": {"token": "..."}}
  # {"type": "s3", "bucket": "orders-archive", "region": "us-east-1", "prefix": "events/", "access_key_id": "AKIA...", "secret_access_key": "..."}
  # {"type": "kafka", "brokers": ["kafka-1.example.com:9093"], "topic": "orders", "tls": true,
  #  "sasl": {"mechanism": "SCRAM-SHA-512", "username": "hub", "password": "..."}}
  # {"type": "pubsub", "project": "acme-prod", "topic": "orders",
  #  "credentials_json": "{\"type\": \"service_account\", ...}"}`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			in, err := createRequest(cmd, f, &spec)
			if err != nil {
				return err
			}
			opts := &CreateOptions{Factory: f, Format: fm, Body: in, AllowDuplicateName: allowDuplicateName}
			return cmdutil.Run(cmd.Context(), opts, runF, createRun)
		},
	}
	cmdutil.AddOutputFlag(cmd, &format, ".id")
	cmd.Flags().BoolVar(&allowDuplicateName, "allow-duplicate-name", false, "create the subscription even if another one of the tenant has its name")
	spec.register(cmd.Flags(), false)
	return cmd
}

func createRun(ctx context.Context, opts *CreateOptions) error {
	f := opts.Factory
	created, err := hubaccess.CallForTenant(ctx, f, func(h hubapi.ControlPlane, tenant string) (hubapi.CreatedSubscription, error) {
		if !opts.AllowDuplicateName {
			if err := refuseTakenName(ctx, h, tenant, opts.Body.Name); err != nil {
				return hubapi.CreatedSubscription{}, err
			}
		}
		return h.CreateSubscription(ctx, tenant, opts.Body)
	})
	if err != nil {
		return err
	}
	err = output.New(f.IOStreams, opts.Format).Print(created, func(t *output.TableWriter) {
		subscriptionTable(t, f, created.Subscription)
	})
	if err != nil || created.SigningSecret == "" {
		return err
	}
	return printSecret(f, opts.Format, created.SigningSecret)
}

func createRequest(cmd *cobra.Command, f *cmdutil.Factory, spec *specFlags) (hubapi.SubscriptionCreate, error) {
	if err := checkFromFile(cmd.Flags()); err != nil {
		return hubapi.SubscriptionCreate{}, err
	}
	if spec.fromFile == "" {
		return spec.createBody(cmd.Flags().Changed)
	}
	var in hubapi.SubscriptionCreate
	return in, readFile(f, spec.fromFile, &in)
}

// refuseTakenName refuses a name another live subscription of the tenant
// has. Two creates at once may both pass; the guard is for people, who
// would otherwise find out only when the name stops resolving.
func refuseTakenName(ctx context.Context, h hubapi.ControlPlane, tenant, name string) error {
	if name == "" {
		return nil // the hub says a name is required
	}
	ids, err := hubaccess.SubscriptionsNamed(ctx, h, tenant, name)
	if err != nil || len(ids) == 0 {
		return err
	}
	return cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf(
		"a subscription%s is already named %q (%s): pick another name, or pass --allow-duplicate-name to create a second one (the name then no longer picks one subscription)",
		hubaccess.InTenant(tenant), name, strings.Join(ids, ", ")))
}
