// Package subs implements `hubctl subs`: a tenant's subscriptions (SPEC §2),
// through the API or directly on the database (hubaccess).
package subs

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// NewCmd returns `hubctl subs`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "subs",
		Aliases: []string{"subscriptions"},
		Short:   "Manage a tenant's subscriptions",
		Long: `Manage subscriptions: which events of a tenant go to which destination.

Through the API (--server) the commands act on the tenant of a tenant API
key, or, with the admin token, on the tenant named by --tenant (sent as
X-Tenant-Id). Directly on the database (--database-url) --tenant is always
required. HUBCTL_TENANT stands in for --tenant.

Creating a subscription, and changing its sink, verifies the destination at
once (a signed probe for webhooks); verify does it again on demand.`,
		Example: `  export HUBCTL_SERVER=https://hub.example.com HUBCTL_TOKEN=$ACME_KEY
  hubctl subs create --name orders --type webhook --url https://acme.example/hooks --event-types transaction.*
  hubctl subs list
  hubctl subs disable 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b
  hubctl subs list --tenant acme --database-url postgres://hub@db/hub`,
	}
	cmd.PersistentFlags().String(hubaccess.FlagTenant, "", "tenant to act on ("+hubaccess.EnvTenant+"); required on the database and with the admin token")
	cmd.AddCommand(
		newCreateCmd(f),
		newListCmd(f),
		newGetCmd(f),
		newUpdateCmd(f),
		newDeleteCmd(f),
		newOneCmd(f, oneSpec{
			verb: "enable", short: "Turn delivery back on",
			long: `Enable a subscription: its events are delivered again. It clears the reason
the hub gave for disabling it, but not a failed verification: a destination
that still fails is disabled again; verify recovers it for good.`,
			do: hubaccess.Hub.EnableSubscription,
		}),
		newOneCmd(f, oneSpec{
			verb: "disable", short: "Stop delivery",
			long: `Disable a subscription: no new deliveries start; its events are no longer
matched. Deliveries in flight finish their attempt.`,
			do: hubaccess.Hub.DisableSubscription,
		}),
		newOneCmd(f, oneSpec{
			verb: "verify", short: "Probe the destination again",
			long: `Verify a subscription's destination again (a signed probe for webhooks).
Success makes it active and enabled, recovering one the hub disabled. A
failed probe exits 1 with the probe's error and leaves the subscription
marked failed.`,
			do: hubaccess.Hub.VerifySubscription,
		}),
		newRotateCmd(f),
		newDeliveriesCmd(f),
	)
	return cmd
}

func newCreateCmd(f *cmdutil.Factory) *cobra.Command {
	var format string
	var spec specFlags
	cmd := &cobra.Command{
		Use:   "create --name NAME --type TYPE [--url URL] [flags]",
		Short: "Create a subscription and verify its destination",
		Long: `Create a subscription. The hub verifies the destination at once; the answer
shows the outcome in verification_state (a failed probe does not fail the
command: fix the destination and run hubctl subs verify).

A webhook's signing secret is printed once, here: store it now. --from-file
takes the whole request body of POST /v1/subscriptions instead of the field
flags, for sinks with more settings than a URL.`,
		Example: `  hubctl subs create --name orders --type webhook --url https://acme.example/hooks \
    --event-types transaction.posted,account.* --retry-schedule 0s,5s,1m,10m
  hubctl subs create --name feed --type pull --origin midaz
  hubctl subs create --from-file orders.json -o json

  # SQS, RabbitMQ and EventBridge take the request body. Credentials are
  # encrypted at rest and read back as "****" (an update that sends "****"
  # back keeps them):
  hubctl subs create --from-file - <<'EOF'
  {"name": "orders-queue", "event_types": ["transaction.*"],
   "sink": {"type": "sqs", "queue_url": "https://sqs.us-east-1.amazonaws.com/123456789012/orders",
            "region": "us-east-1", "access_key_id": "AKIA...", "secret_access_key": "..."}}
  EOF
  # {"type": "rabbitmq", "url": "amqps://user:pass@mq.example.com/vhost", "exchange": "events"}
  # {"type": "eventbridge", "event_bus": "orders", "region": "us-east-1", "access_key_id": "AKIA...", "secret_access_key": "..."}`,
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
			created, err := hubaccess.CallForTenant(cmd.Context(), f, func(h hubaccess.Hub, tenant string) (hubapi.CreatedSubscription, error) {
				return h.CreateSubscription(cmd.Context(), tenant, in)
			})
			if err != nil {
				return err
			}
			err = output.New(f.IOStreams, fm).Print(created, func(t *output.TableWriter) {
				subscriptionTable(t, f, created.Subscription)
			})
			if err != nil || created.SigningSecret == "" {
				return err
			}
			return printSecret(f, fm, created.SigningSecret)
		},
	}
	cmdutil.AddOutputFlag(cmd, &format)
	spec.register(cmd.Flags(), false)
	return cmd
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

// readFile decodes the --from-file body, "-" meaning standard input.
func readFile(f *cmdutil.Factory, path string, dst any) error {
	if path == "-" {
		return decodeBody(f.IOStreams.In, "standard input", dst)
	}
	file, err := os.Open(path)
	if err != nil {
		return cmdutil.UsageErrorf("--%s: %v", flagFromFile, err)
	}
	defer file.Close()
	return decodeBody(file, path, dst)
}

// printSecret shows a secret in the table form (the encoded forms carry it
// as a field) and warns, on stderr so that scripts' output stays clean,
// that it is shown only this once.
func printSecret(f *cmdutil.Factory, fm output.Format, secret string) error {
	if fm == output.Table {
		if _, err := fmt.Fprintf(f.IOStreams.Out, "\nSigning secret: %s\n", secret); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(f.IOStreams.ErrOut, "Store the signing secret now: it will not be shown again.")
	return err
}

func newListCmd(f *cmdutil.Factory) *cobra.Command {
	var format, cursor string
	var limit int
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the tenant's subscriptions, oldest first",
		Long: fmt.Sprintf(`List the tenant's subscriptions, oldest first, --limit at a time (at most
%d). Credentials and signing secrets show as "****". When more
follow, -o json and -o yaml carry next_cursor and the table prints the
command for the next page on stderr.`, service.MaxPageLimit),
		Example: `  hubctl subs list
  hubctl subs list --tenant acme -o json --limit 500`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			if err := cmdutil.CheckLimit(limit); err != nil {
				return err
			}
			page, err := hubaccess.CallForTenant(cmd.Context(), f, func(h hubaccess.Hub, tenant string) (hubapi.Page[hubapi.Subscription], error) {
				return h.ListSubscriptions(cmd.Context(), tenant, service.ListParams{Limit: limit, Cursor: cursor})
			})
			if err != nil {
				return err
			}
			return output.PrintPage(output.New(f.IOStreams, fm), page, subscriptionHeader,
				func(t *output.TableWriter, sub hubapi.Subscription) { subscriptionRow(t, f, sub) },
				"subscriptions", "hubctl subs list"+cmdutil.RepeatLimit(cmd, limit))
		},
	}
	cmdutil.AddOutputFlag(cmd, &format)
	cmdutil.AddPageFlags(cmd, &limit, &cursor, "subscriptions")
	return cmd
}

func newGetCmd(f *cmdutil.Factory) *cobra.Command {
	return newOneCmd(f, oneSpec{
		verb: "get", short: "Show one subscription",
		long: `Show one subscription: its sink, what it matches, its retry settings, and its
verification and failure state. Credentials, and a webhook's signing secret,
show as "****".`,
		do: hubaccess.Hub.GetSubscription,
	})
}

// oneSpec is a command that acts on one subscription and prints it.
type oneSpec struct {
	verb, short, long string
	do                func(h hubaccess.Hub, ctx context.Context, tenant, id string) (hubapi.Subscription, error)
}

func newOneCmd(f *cmdutil.Factory, spec oneSpec) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   spec.verb + " ID",
		Short: spec.short,
		Long:  spec.long + "\n\nExits 3 when the tenant has no subscription with that id.",
		Example: fmt.Sprintf(`  hubctl subs %[1]s 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b
  hubctl subs %[1]s 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b --tenant acme -o json`, spec.verb),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeIDs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			sub, err := hubaccess.CallForTenant(cmd.Context(), f, func(h hubaccess.Hub, tenant string) (hubapi.Subscription, error) {
				return spec.do(h, cmd.Context(), tenant, args[0])
			})
			if err != nil {
				return err
			}
			return output.New(f.IOStreams, fm).Print(sub, func(t *output.TableWriter) {
				subscriptionTable(t, f, sub)
			})
		},
	}
	cmdutil.AddOutputFlag(cmd, &format)
	return cmd
}

func newUpdateCmd(f *cmdutil.Factory) *cobra.Command {
	var format string
	var spec specFlags
	cmd := &cobra.Command{
		Use:   "update ID [flags]",
		Short: "Change some fields of a subscription",
		Long: `Change the fields whose flags are given, and only those. --origin "" matches
every source again; --retry-schedule "" restores the default curve. --url
alone keeps the sink's type. A changed sink is verified again at once.
--signing-secret rotates to that secret, with the overlap of rotate-secret.

--from-file takes the request body of PATCH /v1/subscriptions/{id}, or the
whole subscription as get -o json prints it, edited: every writable field in
the file is sent, so change what you mean to and leave the rest as read. The
fields only the hub sets are dropped before sending: id, tenant_id,
verification_state, verification_error, disabled_reason, failing_since,
last_failure_at, previous_secret_expires_at, created_at and updated_at. The
file's id, when it has one, must be the ID argument, else the command exits
2 and changes nothing, so a file of another subscription is never applied.
Any other field the API does not know stops the command too (exit 2). A
credential or signing_secret left as get shows it, "****", keeps its current
value, and a sink sent back unchanged is not verified again.

Exits 3 when the tenant has no subscription with that id.`,
		Example: `  hubctl subs update 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b --url https://acme.example/v2/hooks
  hubctl subs update 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b --event-types '*' --origin ""

  # Read, edit, send back: secrets stay as "****" and keep their values.
  hubctl subs get 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b -o json > sub.json
  $EDITOR sub.json
  hubctl subs update 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b --from-file sub.json`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeIDs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			if err := checkFromFile(cmd.Flags()); err != nil {
				return err
			}
			// The file is read before the hub is reached: a document that
			// cannot be applied needs no connection to be refused.
			var fromFile hubapi.SubscriptionUpdate
			if spec.fromFile != "" {
				if fromFile, err = readUpdateFile(f, spec.fromFile, args[0]); err != nil {
					return err
				}
			}
			var sub hubapi.Subscription
			err = hubaccess.RunForTenant(cmd.Context(), f, func(h hubaccess.Hub, tenant string) error {
				in := fromFile
				if spec.fromFile == "" {
					var err error
					in, err = spec.updateBody(cmd.Flags().Changed, func() (string, error) {
						current, err := h.GetSubscription(cmd.Context(), tenant, args[0])
						if err != nil {
							return "", err
						}
						sinkType, _ := current.Sink["type"].(string)
						return sinkType, nil
					})
					if err != nil {
						return err
					}
				}
				var err error
				sub, err = h.UpdateSubscription(cmd.Context(), tenant, args[0], in)
				return err
			})
			if err != nil {
				return err
			}
			return output.New(f.IOStreams, fm).Print(sub, func(t *output.TableWriter) {
				subscriptionTable(t, f, sub)
			})
		},
	}
	cmdutil.AddOutputFlag(cmd, &format)
	spec.register(cmd.Flags(), true)
	return cmd
}

func newDeleteCmd(f *cmdutil.Factory) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "delete ID",
		Short: "Delete a subscription and cancel its pending deliveries",
		Long: `Delete a subscription. Its pending deliveries are canceled with it (the
answer says how many); deliveries in flight finish their attempt.

Exits 3 when the tenant has no subscription with that id.`,
		Example:           `  hubctl subs delete 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeIDs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			deleted, err := hubaccess.CallForTenant(cmd.Context(), f, func(h hubaccess.Hub, tenant string) (hubapi.SubscriptionDeleted, error) {
				return h.DeleteSubscription(cmd.Context(), tenant, args[0])
			})
			if err != nil {
				return err
			}
			return output.New(f.IOStreams, fm).Print(deleted, func(t *output.TableWriter) {
				t.Header("id", "canceled deliveries")
				t.Row(deleted.ID, fmt.Sprint(deleted.CanceledJobs))
			})
		},
	}
	cmdutil.AddOutputFlag(cmd, &format)
	return cmd
}

func newRotateCmd(f *cmdutil.Factory) *cobra.Command {
	var format, secret string
	cmd := &cobra.Command{
		Use:   "rotate-secret ID [--signing-secret S]",
		Short: "Give a webhook a new signing secret, printed once",
		Long: `Rotate a webhook's signing secret to the given one (at least 24 characters)
or to one the hub generates. Deliveries carry signatures of both the new and
the previous secret until previous_secret_expires_at, so receivers can switch
without losing a delivery. The new secret is printed once, here.

Exits 3 when the tenant has no subscription with that id, 1 when it is not a
webhook.`,
		Example: `  hubctl subs rotate-secret 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b
  hubctl subs rotate-secret 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b --signing-secret "$(openssl rand -hex 32)"`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeIDs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			rotation, err := hubaccess.CallForTenant(cmd.Context(), f, func(h hubaccess.Hub, tenant string) (hubapi.SecretRotation, error) {
				return h.RotateSecret(cmd.Context(), tenant, args[0], secret)
			})
			if err != nil {
				return err
			}
			err = output.New(f.IOStreams, fm).Print(rotation, func(t *output.TableWriter) {
				t.Header("signing secret", "previous secret expires")
				t.Row(rotation.SigningSecret, output.OptionalTime(rotation.PreviousSecretExpiresAt))
			})
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(f.IOStreams.ErrOut, "Store the signing secret now: it will not be shown again.")
			return err
		},
	}
	cmdutil.AddOutputFlag(cmd, &format)
	cmd.Flags().StringVar(&secret, flagSigningSecret, "", "the new secret, at least 24 characters (default: the hub generates one)")
	return cmd
}

// completionTimeout bounds the lookup behind a Tab press.
const completionTimeout = 5 * time.Second

// completeIDs completes the first argument with the ids of the tenant's
// subscriptions, their names as descriptions. Completion is best effort: a
// hub that cannot be reached completes nothing rather than print errors
// into the user's shell.
func completeIDs(f *cmdutil.Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		// Completion runs outside the root's pre-run for this command, so
		// the command's own flags are recorded here.
		configFile, _ := cmd.Flags().GetString("config")
		f.UseFlags(cmd.Flags(), configFile)
		ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
		defer cancel()
		var completions []cobra.Completion
		_ = hubaccess.RunForTenant(ctx, f, func(h hubaccess.Hub, tenant string) error {
			page, err := h.ListSubscriptions(ctx, tenant, service.ListParams{Limit: service.MaxPageLimit})
			for _, sub := range page.Items {
				if strings.HasPrefix(sub.ID, toComplete) {
					completions = append(completions, cobra.CompletionWithDesc(sub.ID, sub.Name))
				}
			}
			return err
		})
		return completions, cobra.ShellCompDirectiveNoFileComp
	}
}
