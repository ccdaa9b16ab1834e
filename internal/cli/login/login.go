// Package login implements `hubctl login`: store a hub's address and token
// as a named context, so later commands need no --server, --token or
// exported variables.
package login

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/profile"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// Options is `hubctl login` parsed.
type Options struct {
	Factory *cmdutil.Factory
	Server  string
	Name    string
	Tenant  string
	// CAFile is trusted for the server beside the system's authorities.
	CAFile string
	// NoVerify stores the context without asking the hub first.
	NoVerify bool
}

// verifyTimeout bounds the check of a new context: a hub that does not
// answer in this long is as good as unreachable to the person waiting.
const verifyTimeout = 15 * time.Second

// NewCmd returns `hubctl login`; a non-nil runF replaces the real run.
func NewCmd(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	var opts Options
	cmd := &cobra.Command{
		Use:   "login --server URL [--name NAME] [--tenant T]",
		Short: "Store a hub's address and token as the current context",
		Long: `Store a hub's API address and a token (the admin token or a tenant API key)
as a named context and make it current: later commands talk to that hub
without --server, --token or exported HUBCTL_* variables.

The token is read from a prompt that does not echo it when stdin is a
terminal, else from the first line of stdin (a pipe, a file): never from a
flag, which other users could read in the process list.

Contexts live in config.yaml under hubctl's directory in the user's
configuration directory (~/.config/hubctl on Linux; HUBCTL_CONFIG_DIR moves
it), readable by its owner only. hubctl context list shows them, hubctl
context use switches, HUBCTL_CONTEXT picks one for a single shell.
--server, HUBCTL_SERVER and a configured database still win over the
context.

Before storing anything, login makes one authenticated call to the hub: a
server that does not answer exits 5, a token it refuses exits 4, an unknown
--tenant exits 3, and nothing is stored. --no-verify skips the check (to
store a hub that is not up yet).`,
		Example: `  hubctl login --server https://hub.example.com
  echo "$HUB_KEY" | hubctl login --server https://hub.example.com --name prod
  hubctl login --server https://hub.example.com --name acme-admin --tenant acme < admin-token.txt`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Factory = f
			u, err := url.Parse(opts.Server)
			if opts.Server == "" {
				return cmdutil.UsageErrorf("--server is required: the hub's API address, e.g. https://hub.example.com")
			}
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return cmdutil.UsageErrorf("invalid --server %q: use http(s)://host[:port]", opts.Server)
			}
			if opts.Name == "" {
				opts.Name = u.Hostname()
			}
			if strings.TrimSpace(opts.Name) == "" {
				return cmdutil.UsageErrorf("invalid --name %q: must not be blank", opts.Name)
			}
			if opts.Tenant != "" {
				if err := hubapi.CheckTenantID(opts.Tenant); err != nil {
					return cmdutil.WithCode(cmdutil.ExitUsage, err)
				}
			}
			return cmdutil.Run(cmd.Context(), &opts, runF, run)
		},
	}
	cmd.Flags().StringVar(&opts.Server, hubaccess.FlagServer, "", "the hub's API address (required)")
	cmd.Flags().StringVar(&opts.Name, "name", "", "the context's name (default: the server's host name)")
	cmd.Flags().StringVar(&opts.Tenant, hubaccess.FlagTenant, "", "tenant to act on with an admin token")
	cmd.Flags().StringVar(&opts.CAFile, "ca-file", "", "PEM file of the authority that signed the hub's certificate, trusted beside the system's (stored as an absolute path)")
	cmd.Flags().BoolVar(&opts.NoVerify, "no-verify", false, "store the context without checking that the hub answers and takes the token")
	return cmd
}

func run(ctx context.Context, opts *Options) error {
	f := opts.Factory
	token, err := readToken(f, opts.Server)
	if err != nil {
		return err
	}
	server := strings.TrimRight(opts.Server, "/")
	caFile := opts.CAFile
	if caFile != "" {
		// Later commands run from other directories.
		if caFile, err = filepath.Abs(caFile); err != nil {
			return err
		}
		if _, err := hubaccess.HTTPClientTrusting(caFile); err != nil {
			return cmdutil.UsageErrorf("invalid --ca-file: %v", err)
		}
	}
	if !opts.NoVerify {
		checkCtx, cancel := context.WithTimeout(ctx, verifyTimeout)
		err := hubaccess.Check(checkCtx, hubaccess.Target{Server: server, Token: token, Tenant: opts.Tenant, Context: opts.Name, CAFile: caFile})
		cancel()
		if err != nil {
			return fmt.Errorf("check %s: %w; nothing stored (--no-verify stores it unchecked)", server, err)
		}
	}
	path, err := profile.Path(f.LookupEnv)
	if err != nil {
		return err
	}
	file, err := profile.Load(path)
	if err != nil {
		return err
	}
	file.Set(profile.Context{Name: opts.Name, Server: server, Token: token, Tenant: opts.Tenant, CAFile: caFile})
	if err := file.Use(opts.Name); err != nil {
		return err
	}
	if err := file.Save(path); err != nil {
		return err
	}
	fmt.Fprintf(f.IOStreams.ErrOut, "Context %q (%s) is now current; stored in %s\n", opts.Name, opts.Server, path)
	return nil
}

// readToken asks for the token without echo on a terminal, else reads the
// first line of stdin.
func readToken(f *cmdutil.Factory, server string) (string, error) {
	ios := f.IOStreams
	var line string
	if file, ok := ios.In.(*os.File); ok && ios.IsStdinTTY() {
		fmt.Fprintf(ios.ErrOut, "Token for %s: ", server)
		raw, err := term.ReadPassword(file.Fd())
		fmt.Fprintln(ios.ErrOut)
		if err != nil {
			return "", fmt.Errorf("read the token: %w", err)
		}
		line = string(raw)
	} else {
		read, err := bufio.NewReader(ios.In).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("read the token from stdin: %w", err)
		}
		line = read
	}
	token := strings.TrimSpace(line)
	if token == "" {
		return "", cmdutil.UsageErrorf("no token given: type it at the prompt or pipe it on stdin")
	}
	return token, nil
}
