// Package portal implements `hubctl portal`: a single-use sign-in link to
// the web portal (SPEC §10, docs/portal.md), through the API or directly on
// the database (hubaccess).
package portal

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/internal/crypto"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// Options is `hubctl portal` parsed.
type Options struct {
	Factory  *cmdutil.Factory
	Format   output.Format
	Tenant   string
	TTL      string
	ReadOnly bool
	Open     bool
	// Browse opens a URL in the desktop's browser; tests replace it.
	Browse func(url string) error
}

// NewCmd returns `hubctl portal`; a non-nil runF replaces the real run.
func NewCmd(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	var format string
	opts := &Options{Factory: f, Browse: openBrowser}
	cmd := &cobra.Command{
		Use:   "portal [--tenant ID] [--ttl D] [--read-only] [--open]",
		Short: "Print a sign-in link to the web portal",
		Long: `Print a single-use link that signs a browser into the hub's web portal
(docs/portal.md). Opening it starts a session that lasts until the link
expires (--ttl, default 1h, at most 168h); the link is then spent.

Whose portal: with a tenant API key, the key's own tenant; with the admin
token (or directly on the database), the tenant --tenant names, or the
operator console when no tenant is named. --read-only opens a session that
sees everything and changes nothing. --open starts this desktop's browser
on the link as well.

The link is a credential until it is opened: send it to one person, over a
channel you would send a password over.`,
		Example: `  hubctl portal --tenant acme --ttl 24h
  hubctl portal --tenant acme --read-only
  hubctl portal --open`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			opts.Format = fm
			if opts.Tenant == "" {
				opts.Tenant = f.FlagOrEnv(hubaccess.FlagTenant, hubaccess.EnvTenant)
			}
			if opts.Tenant != "" {
				if err := hubapi.CheckTenantID(opts.Tenant); err != nil {
					return cmdutil.UsageErrorf("invalid --tenant: %v", err)
				}
			}
			if _, err := hubapi.ParsePortalLinkTTL(opts.TTL); err != nil {
				return cmdutil.UsageErrorf("invalid --ttl: %v", err)
			}
			return cmdutil.Run(cmd.Context(), opts, runF, run)
		},
	}
	cmdutil.AddOutputFlag(cmd, &format, "")
	cmd.Flags().StringVar(&opts.Tenant, hubaccess.FlagTenant, "", "the tenant whose portal to sign into ("+hubaccess.EnvTenant+"); none: the key's own tenant, or the operator console")
	cmd.Flags().StringVar(&opts.TTL, "ttl", "", "how long the link and its session last, such as 30m or 24h (default 1h, at most 168h)")
	cmd.Flags().BoolVar(&opts.ReadOnly, "read-only", false, "a session that sees everything and changes nothing")
	cmd.Flags().BoolVar(&opts.Open, "open", false, "open the link in this desktop's browser too")
	return cmd
}

func run(ctx context.Context, opts *Options) error {
	target, err := hubaccess.Resolve(opts.Factory)
	if err != nil {
		return err
	}
	in := hubapi.PortalLinkCreate{TTL: opts.TTL, ReadOnly: opts.ReadOnly}
	console := opts.Tenant == "" && !(target.Remote() && isTenantKey(target.Token))
	link, err := hubaccess.Call(ctx, opts.Factory, func(h hubapi.ControlPlane) (hubapi.PortalLink, error) {
		if console {
			return h.CreateConsoleLink(ctx, in)
		}
		return h.CreatePortalLink(ctx, opts.Tenant, in)
	})
	if err != nil {
		return err
	}
	ios := opts.Factory.IOStreams
	if opts.Format == output.Table {
		// The link alone on stdout, so that $(hubctl portal) is the link.
		fmt.Fprintln(ios.Out, link.URL)
		fmt.Fprintln(ios.ErrOut, describe(link, opts.Tenant, console))
	} else if err := output.New(ios, opts.Format).Print(link, nil); err != nil {
		return err
	}
	if opts.Open {
		if err := opts.Browse(link.URL); err != nil {
			fmt.Fprintf(ios.ErrOut, "could not open a browser (%v): open the link above yourself\n", err)
		}
	}
	return nil
}

// isTenantKey tells a tenant API key from the admin token by the prefix
// every key has, so that `hubctl portal` with a key and no --tenant asks
// for the key's own tenant rather than the console it may not open.
func isTenantKey(token string) bool { return strings.HasPrefix(token, crypto.APITokenPrefix) }

// describe is the line under the link: whose portal, until when.
func describe(link hubapi.PortalLink, tenant string, console bool) string {
	whose := "the operator console"
	switch {
	case !console && tenant != "":
		whose = "tenant " + tenant + "'s portal"
	case !console:
		whose = "your tenant's portal"
	}
	mode := ""
	if link.ReadOnly {
		mode = ", read-only"
	}
	return fmt.Sprintf("single-use sign-in link to %s%s; it and its session end at %s", whose, mode, link.ExpiresAt.Local().Format(time.RFC3339))
}

// openBrowser starts the desktop's URL handler; where there is none (a
// server, a container) it says so and the link stays printed.
func openBrowser(url string) error {
	var name string
	var args []string
	switch runtime.GOOS {
	case "darwin":
		name = "open"
	case "windows":
		name, args = "rundll32", []string{"url.dll,FileProtocolHandler"}
	default:
		name = "xdg-open"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return errors.New("no " + name + " on this machine")
	}
	cmd := exec.Command(path, append(args, url)...)
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}
