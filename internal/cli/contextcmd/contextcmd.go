// Package contextcmd implements `hubctl context list|use|delete`: the stored hubs
// that hubctl login and hubctl dev write.
package contextcmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/internal/cli/profile"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// NewCmd returns `hubctl context`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "context",
		Short: "List and switch the stored hubs (contexts)",
		Long: `A context is a stored hub: its API address, a token and optionally a tenant,
written by hubctl login and hubctl dev. Commands use the current context
when neither --server (HUBCTL_SERVER) nor a database is given;
HUBCTL_CONTEXT picks another for one shell.`,
		Example: `  hubctl context list
  hubctl context use prod
  hubctl context delete old-staging`,
	}
	cmd.AddCommand(NewCmdList(f, nil), NewCmdUse(f, nil), NewCmdDelete(f, nil))
	return cmd
}

// Item is one context as listings show it: never its token.
type Item struct {
	Name    string `json:"name"`
	Server  string `json:"server"`
	Tenant  string `json:"tenant,omitempty"`
	Current bool   `json:"current"`
}

// ListOptions is `hubctl context list` parsed.
type ListOptions struct {
	Factory *cmdutil.Factory
	Format  output.Format
}

// NewCmdList returns `hubctl context list`.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the stored contexts; the current one is marked",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			return cmdutil.Run(cmd.Context(), &ListOptions{Factory: f, Format: fm}, runF, listRun)
		},
	}
	cmdutil.AddOutputFlag(cmd, &format, "")
	return cmd
}

func listRun(_ context.Context, opts *ListOptions) error {
	file, _, err := load(opts.Factory)
	if err != nil {
		return err
	}
	active, _, err := file.Active(opts.Factory.LookupEnv)
	if err != nil {
		return err
	}
	page := hubapi.Page[Item]{Items: []Item{}}
	for _, c := range file.Contexts {
		page.Items = append(page.Items, Item{Name: c.Name, Server: c.Server, Tenant: c.Tenant, Current: c.Name == active.Name})
	}
	return output.PrintPage(output.New(opts.Factory.IOStreams, opts.Format), page,
		func(t *output.TableWriter) { t.Header("current", "name", "server", "tenant") },
		func(t *output.TableWriter, i Item) {
			mark := ""
			if i.Current {
				mark = "*"
			}
			t.Row(mark, i.Name, i.Server, i.Tenant)
		}, "contexts (hubctl login --server URL stores one)", "")
}

// UseOptions is `hubctl context use` parsed.
type UseOptions struct {
	Factory *cmdutil.Factory
	Name    string
}

// NewCmdUse returns `hubctl context use`.
func NewCmdUse(f *cmdutil.Factory, runF func(*UseOptions) error) *cobra.Command {
	return &cobra.Command{
		Use:     "use NAME",
		Short:   "Make a stored context the current one",
		Example: `  hubctl context use dev`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdutil.Run(cmd.Context(), &UseOptions{Factory: f, Name: args[0]}, runF, useRun)
		},
	}
}

func useRun(_ context.Context, opts *UseOptions) error {
	file, path, err := load(opts.Factory)
	if err != nil {
		return err
	}
	if err := file.Use(opts.Name); err != nil {
		return err
	}
	if err := file.Save(path); err != nil {
		return err
	}
	fmt.Fprintf(opts.Factory.IOStreams.ErrOut, "Context %q is now current\n", opts.Name)
	return nil
}

// DeleteOptions is `hubctl context delete` parsed.
type DeleteOptions struct {
	Factory *cmdutil.Factory
	Name    string
}

// NewCmdDelete returns `hubctl context delete`.
func NewCmdDelete(f *cmdutil.Factory, runF func(*DeleteOptions) error) *cobra.Command {
	return &cobra.Command{
		Use:   "delete NAME",
		Short: "Forget a stored context and its token",
		Long: `Remove a stored context, its token with it. When it was the current one, no
context is current until hubctl context use picks another. Exits 3 when no
context has that name.`,
		Example: `  hubctl context delete old-staging`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdutil.Run(cmd.Context(), &DeleteOptions{Factory: f, Name: args[0]}, runF, deleteRun)
		},
	}
}

func deleteRun(_ context.Context, opts *DeleteOptions) error {
	file, path, err := load(opts.Factory)
	if err != nil {
		return err
	}
	wasCurrent := file.Current == opts.Name
	if err := file.Delete(opts.Name); err != nil {
		return err
	}
	if err := file.Save(path); err != nil {
		return err
	}
	msg := fmt.Sprintf("Context %q deleted", opts.Name)
	if wasCurrent {
		msg += "; no context is current now (hubctl context use NAME picks one)"
	}
	fmt.Fprintln(opts.Factory.IOStreams.ErrOut, msg)
	return nil
}

func load(f *cmdutil.Factory) (*profile.File, string, error) {
	path, err := profile.Path(f.LookupEnv)
	if err != nil {
		return nil, "", err
	}
	file, err := profile.Load(path)
	return file, path, err
}
