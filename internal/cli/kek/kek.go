// Package kek implements `hubctl kek status|reencrypt`: moving the secrets
// the hub stores from one key-encryption key to the next (the runbook is in
// docs/operating.md, "Rotating the key-encryption key").
package kek

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/hub"
	"github.com/hubctl/hubctl/internal/service"
)

// NewCmd returns `hubctl kek`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kek",
		Short: "Rotate the key-encryption key of stored secrets",
		Long: `Show and move the keys the stored secrets (webhook signing secrets, sink
credentials) are sealed under. The key-encryption key (KEK) may list several
keys, id:key,id:key: the first seals, all open. To rotate, make the new key
the first of the list everywhere, run hubctl kek reencrypt, check hubctl kek
status, then drop the old key.

These commands work directly on the database (--database-url or
STREAMING_HUB_POSTGRES_DSN) with the KEK of the process running them
(STREAMING_HUB_KEK_REF and the variable it names), as hubctl serve reads it.`,
		Example: `  hubctl kek status
  STREAMING_HUB_KEK_REF=HUB_KEK HUB_KEK="2026-12:$NEW,k1a2b3c4d:$OLD" hubctl kek reencrypt --dry-run`,
	}
	cmd.AddCommand(NewCmdStatus(f, nil), NewCmdReencrypt(f, nil))
	return cmd
}

// withKEK opens the database and the keyring, as serve does, and runs fn
// with the use cases over them.
func withKEK(ctx context.Context, f *cmdutil.Factory, fn func(*service.KEK) error) error {
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	if cfg.Postgres.DSN == "" {
		return cmdutil.UsageErrorf("hubctl kek works on the database directly: set --database-url or STREAMING_HUB_POSTGRES_DSN")
	}
	keys, err := hub.LoadKeyring(cfg, f.LookupEnv)
	if err != nil {
		return err
	}
	st, err := f.Store(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(service.NewKEK(st.Catalog, keys))
}
