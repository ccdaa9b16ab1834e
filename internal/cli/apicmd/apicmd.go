// Package apicmd implements `hubctl api`: the HTTP API's contract, for
// tooling that works without a running hub.
package apicmd

import (
	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/openapi"
)

// NewCmd returns `hubctl api`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "api",
		Short: "The HTTP API's contract",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newOpenAPICmd(f))
	return cmd
}

func newOpenAPICmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "openapi",
		Short: "Print the OpenAPI 3.1 document this binary serves at /openapi.json",
		Long: `Print the OpenAPI 3.1 document of the HTTP API, byte for byte what
GET /openapi.json answers on a hub of this version, to generate a client
or lint it offline (docs/api.md, Generating a client).`,
		Example: `  hubctl api openapi > hubctl.openapi.json
  npx --yes openapi-typescript@7.13.0 hubctl.openapi.json -o hubctl-api.d.ts`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			doc, err := openapi.JSON()
			if err != nil {
				return err
			}
			_, err = f.IOStreams.Out.Write(doc)
			return err
		},
	}
}
