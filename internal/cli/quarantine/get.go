package quarantine

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// GetOptions is `hubctl quarantine get` parsed.
type GetOptions struct {
	Factory *cmdutil.Factory
	Format  output.Format
	ID      string
	// Raw writes the stored value's bytes to stdout instead of the record.
	Raw bool
}

// NewCmdGet returns `hubctl quarantine get`; a non-nil runF replaces the
// real run.
func NewCmdGet(f *cmdutil.Factory, runF func(*GetOptions) error) *cobra.Command {
	var format string
	var raw bool
	cmd := &cobra.Command{
		Use:   "get ID",
		Short: "Show one quarantined record whole",
		Long: `Show one quarantined record whole: every header, the key and the value
(-o json and -o yaml carry it as value_base64), with the value's size and
SHA-256. --raw writes the stored value's bytes to stdout instead, for a file
or a pipe (never to a terminal, where crafted bytes could drive it).

A value over STREAMING_HUB_MAX_EVENT_BYTES was stored as its first 64 KiB:
value_truncated says so, and --raw warns on stderr.

Exits 3 when no record has that id.`,
		Example: `  hubctl quarantine get 42
  hubctl quarantine get 42 -o json
  hubctl quarantine get 42 --raw > record.bin`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			if raw && cmd.Flags().Changed("output") {
				return cmdutil.UsageErrorf("--raw writes the value's bytes; it takes no --output")
			}
			if raw && f.IOStreams.IsStdoutTTY() {
				return cmdutil.UsageErrorf("--raw writes the value's bytes, which may drive a terminal: redirect stdout to a file or a pipe")
			}
			return cmdutil.Run(cmd.Context(), &GetOptions{Factory: f, Format: fm, ID: args[0], Raw: raw}, runF, getRun)
		},
	}
	cmdutil.AddOutputFlag(cmd, &format, ".id")
	cmd.Flags().BoolVar(&raw, "raw", false, "write the stored value's bytes to stdout")
	return cmd
}

func getRun(ctx context.Context, opts *GetOptions) error {
	item, err := hubaccess.Call(ctx, opts.Factory, func(h hubapi.ControlPlane) (hubapi.QuarantineItem, error) {
		return h.GetQuarantined(ctx, opts.ID)
	})
	if err != nil {
		return err
	}
	ios := opts.Factory.IOStreams
	if opts.Raw {
		value, err := base64.StdEncoding.DecodeString(item.ValueBase64)
		if err != nil {
			return fmt.Errorf("the hub sent a value that is not base64: %w", err)
		}
		if item.ValueTruncated {
			fmt.Fprintf(ios.ErrOut, "warning: only the first %d of the value's %d bytes were kept (sha256 of the whole value: %s)\n",
				len(value), item.ValueSize, item.ValueSHA256)
		}
		_, err = ios.Out.Write(value)
		return err
	}
	if opts.Format == output.Table {
		if err := writeRecord(ios.Out, item); err != nil {
			return err
		}
	}
	return output.New(ios, opts.Format).Print(item, func(t *output.TableWriter) {
		t.Header("header", "value")
		for _, h := range item.Headers {
			t.Row(encoded(h.Key, h.KeyEncoding, 0), encoded(h.Value, h.Encoding, 0))
		}
	})
}

// writeRecord shows the record's fields above its headers' table.
func writeRecord(w io.Writer, item hubapi.QuarantineItem) error {
	value := strconv.FormatInt(item.ValueSize, 10) + " bytes, sha256 " + item.ValueSHA256
	if item.ValueTruncated {
		value += " (only the first 64 KiB kept)"
	}
	_, err := fmt.Fprintf(w, "id:        %d\nreceived:  %s\nreason:    %s\ndetail:    %s\nposition:  %s\nkey:       %s\nvalue:     %s\n\n",
		item.ID, item.ReceivedAt.Format(time.RFC3339), output.SafeText(item.Reason, 0), output.SafeText(item.Detail, 0),
		position(item.Topic, item.Partition, item.Offset), displayKey(item.Key, item.Encoding, 0), value)
	return err
}
