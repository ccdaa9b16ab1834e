package cmdutil

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// AddOutputFlag registers -o for the formats every listing accepts, and
// --jq to pick from the JSON; jqExample is an expression that fits the
// command's JSON (see AddJQFlag).
func AddOutputFlag(cmd *cobra.Command, format *string, jqExample string) {
	cmd.Flags().StringVarP(format, "output", "o", "", "output format: table, json or yaml")
	AddJQFlag(cmd, jqExample)
}

// jqFlag is the name of the --jq flag.
const jqFlag = "jq"

// AddJQFlag registers --jq on a command whose output ResolveFormat picks.
// The help's example is jqExample, an expression over the command's own
// JSON (".items[].id" for a page, ".id" for one object), so it can be
// copied as it is; "" shows none.
func AddJQFlag(cmd *cobra.Command, jqExample string) {
	cmd.Flags().String(jqFlag, "", jqUsage(jqExample))
}

func jqUsage(example string) string {
	usage := "filter the JSON output with a jq expression (implies -o json)"
	if example == "" {
		return usage
	}
	return usage + ", e.g. '" + example + "'"
}

// ResolveFormat is output.Resolve with an unknown -o made a usage error
// (exit 2): the command line is wrong, not the hub's answer. A --jq
// expression is compiled here, makes the output JSON, and conflicts with
// any other -o.
func ResolveFormat(f *Factory, flag string, allowed ...output.Format) (output.Format, error) {
	if expr := f.FlagOrEnv(jqFlag, ""); expr != "" {
		if flag != "" && flag != string(output.JSON) {
			return "", UsageErrorf("--jq filters JSON: it cannot be combined with -o %s", flag)
		}
		q, err := output.ParseJQ(expr)
		if err != nil {
			return "", WithCode(ExitUsage, err)
		}
		f.IOStreams.JSONFilter = q
		return output.JSON, nil
	}
	fm, err := output.Resolve(flag, f.IOStreams, allowed...)
	if err != nil {
		return "", WithCode(ExitUsage, err)
	}
	return fm, nil
}

// AddPageFlags registers a listing's --limit and --cursor; what names the
// items in the help text ("tenants", "dead letters").
func AddPageFlags(cmd *cobra.Command, limit *int, cursor *string, what string) {
	cmd.Flags().IntVar(limit, "limit", hubapi.DefaultPageLimit, fmt.Sprintf("most %s to list (1-%d)", what, hubapi.MaxPageLimit))
	cmd.Flags().StringVar(cursor, "cursor", "", "continue a listing from the next_cursor of its previous page")
}

// CheckLimit rejects a --limit outside 1..hubapi.MaxPageLimit. It is
// checked here, not only by the service: the service reads 0 as "the
// default", but on the command line the default is already filled in, so 0
// is a mistake; and the message names the flag.
func CheckLimit(limit int) error {
	if limit < 1 || limit > hubapi.MaxPageLimit {
		return UsageErrorf("invalid --limit %d: must be between 1 and %d", limit, hubapi.MaxPageLimit)
	}
	return nil
}

// RepeatLimit is " --limit N" when the user chose the limit, else "": the
// next-page hint repeats what was chosen and leaves defaults to default.
func RepeatLimit(cmd *cobra.Command, limit int) string {
	if !cmd.Flags().Changed("limit") {
		return ""
	}
	return fmt.Sprintf(" --limit %d", limit)
}
