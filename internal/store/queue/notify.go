package queue

import (
	"context"

	"github.com/hubctl/hubctl/internal/store/pg"
)

// ListenJobs LISTENs on pg.JobsChannel.
func (s *Store) ListenJobs(ctx context.Context) (*pg.Listener, error) {
	return pg.Listen(ctx, s.Pool, pg.JobsChannel, "new jobs")
}
