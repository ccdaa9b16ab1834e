package service

import (
	"context"
	"errors"
	"time"

	"github.com/hubctl/hubctl/internal/store/lifecycle"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// Storage reports and prunes what retention manages (docs/architecture.md,
// "Storage lifecycle"), for `hubctl storage` and /admin/storage.
type Storage struct {
	store  *lifecycle.Store
	policy lifecycle.RetentionPolicy
	now    func() time.Time
}

// NewStorage returns the storage use cases over st under policy.
func NewStorage(st *lifecycle.Store, policy lifecycle.RetentionPolicy, now func() time.Time) *Storage {
	return &Storage{store: st, policy: policy, now: now}
}

// Status reports every managed table and what the next prune removes.
func (s *Storage) Status(ctx context.Context) (hubapi.StorageStatus, error) {
	st, err := s.store.StorageStatus(ctx, s.now(), s.policy)
	if err != nil {
		return hubapi.StorageStatus{}, err
	}
	out := hubapi.StorageStatus{
		Tables:         make([]hubapi.StorageTable, 0, len(st.Tables)),
		Kept:           keptView(st.Kept),
		ExpiredCursors: st.ExpiredCursors,
		Retention: hubapi.StorageRetention{
			Events: s.policy.Events.String(), Deliveries: s.policy.Deliveries.String(), Quarantine: s.policy.Quarantine.String(),
		},
	}
	for _, t := range st.Tables {
		var oldest *time.Time
		if t.Oldest != nil {
			u := t.Oldest.UTC()
			oldest = &u
		}
		out.Tables = append(out.Tables, hubapi.StorageTable{
			Table: t.Table, Bytes: t.Bytes, Partitions: t.Partitions, OldestRow: oldest,
			NextPrune: hubapi.StoragePrunable{Partitions: t.PrunePartitions, Rows: t.PruneRows, Bytes: t.PruneBytes},
		})
	}
	return out, nil
}

// Prune runs retention now (or reports what it would remove), one process
// at a time: while another holds the retention lock it is a conflict.
func (s *Storage) Prune(ctx context.Context, dryRun bool) (hubapi.StoragePruneResult, error) {
	var rep lifecycle.PruneReport
	err := s.store.WithRetentionLock(ctx, func() error {
		now := s.now()
		// A prune run makes sure the days ahead have their partitions, as
		// serve's partition and sequence services do, so a hub without
		// serve running (only `hubctl storage prune` from cron) keeps them.
		if !dryRun {
			if err := s.store.EnsurePartitions(ctx, now); err != nil {
				return err
			}
		}
		var err error
		rep, err = s.store.Prune(ctx, now, s.policy, dryRun)
		return err
	})
	if errors.Is(err, lifecycle.ErrRetentionBusy) {
		return hubapi.StoragePruneResult{}, &hubapi.ConflictError{Code: CodeRetentionBusy,
			Message: "another process is running retention now; try again in a moment", Err: err}
	}
	if err != nil {
		return hubapi.StoragePruneResult{}, err
	}
	out := hubapi.StoragePruneResult{DryRun: dryRun, Removed: []hubapi.StorageRemoval{}, Kept: keptView(rep.Kept),
		ExpiredCursors: rep.ExpiredCursors}
	for _, r := range rep.Removals {
		out.Removed = append(out.Removed, hubapi.StorageRemoval{Table: r.Table, Partition: r.Partition, Whole: r.Whole,
			Rows: r.Rows, Bytes: r.Bytes})
	}
	return out, nil
}

// CodeRetentionBusy answers a prune while another process runs retention.
const CodeRetentionBusy = "retention_busy"

func keptView(kept []lifecycle.Kept) []hubapi.StorageKept {
	out := make([]hubapi.StorageKept, 0, len(kept))
	for _, k := range kept {
		out = append(out, hubapi.StorageKept{Table: k.Table, Partition: k.Partition, Reason: k.Reason})
	}
	return out
}
