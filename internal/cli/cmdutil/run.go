package cmdutil

import "context"

// Run ends every verb's RunE once its flags are parsed and checked into
// opts: a test's runF receives opts in place of the real run, so flag parsing
// and validation are tested without a hub or a database (the seam GitHub's
// cli/cli calls runF).
func Run[T any](ctx context.Context, opts *T, runF func(*T) error, run func(context.Context, *T) error) error {
	if runF != nil {
		return runF(opts)
	}
	return run(ctx, opts)
}
