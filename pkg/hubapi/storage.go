package hubapi

import "time"

// StorageStatus is the body of GET /admin/storage: each table retention
// manages, and what the next prune would remove.
type StorageStatus struct {
	Tables []StorageTable `json:"tables"`
	// Kept lists expired partitions that stay because something still
	// needs them.
	Kept []StorageKept `json:"kept"`
	// ExpiredCursors counts the pull cursors the next prune leaves behind
	// retention (their next read says events_expired).
	ExpiredCursors int64            `json:"expired_cursors"`
	Retention      StorageRetention `json:"retention"`
}

// StorageRetention is the policy in force, as durations like "168h0m0s".
type StorageRetention struct {
	Events     string `json:"events"`
	Deliveries string `json:"deliveries"`
	Quarantine string `json:"quarantine"`
}

// StorageTable is one table of a storage status.
type StorageTable struct {
	Table      string `json:"table"`
	Bytes      int64  `json:"bytes"`
	Partitions int    `json:"partitions"`
	// OldestRow is null when the table is empty.
	OldestRow *time.Time      `json:"oldest_row"`
	NextPrune StoragePrunable `json:"next_prune"`
}

// StoragePrunable is what a prune removes from one table.
type StoragePrunable struct {
	Partitions int   `json:"partitions"`
	Rows       int64 `json:"rows"`
	Bytes      int64 `json:"bytes"`
}

// StorageKept is an expired partition that stays, with the reason.
type StorageKept struct {
	Table     string `json:"table"`
	Partition string `json:"partition"`
	Reason    string `json:"reason"`
}

// StoragePruneRequest is the body of POST /admin/storage/prune.
type StoragePruneRequest struct {
	DryRun bool `json:"dry_run"`
}

// StoragePruneResult is the answer of POST /admin/storage/prune.
type StoragePruneResult struct {
	DryRun         bool             `json:"dry_run"`
	Removed        []StorageRemoval `json:"removed"`
	Kept           []StorageKept    `json:"kept"`
	ExpiredCursors int64            `json:"expired_cursors"`
}

// StorageRemoval is one partition dropped (whole) or the expired rows
// deleted from a catch-all partition.
type StorageRemoval struct {
	Table     string `json:"table"`
	Partition string `json:"partition"`
	Whole     bool   `json:"whole"`
	Rows      int64  `json:"rows"`
	Bytes     int64  `json:"bytes"`
}

// TenantPurgeResult is the answer of DELETE /admin/tenants/{id}?purge=true:
// the rows removed per table.
type TenantPurgeResult struct {
	Tenant  string        `json:"tenant"`
	Removed []PurgedTable `json:"removed"`
}

// PurgedTable counts one table's rows a purge removed.
type PurgedTable struct {
	Table string `json:"table"`
	Rows  int64  `json:"rows"`
}
