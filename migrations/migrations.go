// Package migrations embeds the SQL schema in golang-migrate's file format
// (NNNNNN_name.up.sql / .down.sql) so the binary carries its own schema.
package migrations

import "embed"

// FS holds every migration file.
//
//go:embed *.sql
var FS embed.FS
