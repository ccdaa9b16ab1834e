package bench

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hubctl/hubctl/internal/benchmark"
)

// cpuProbe reads CPU time from /proc: the hub's process when its pid is
// known, every postgres process when the database is on this machine.
type cpuProbe struct {
	hubPID   int
	postgres bool
}

// cpuReading is one reading in clock ticks; ok false where nothing could
// be read.
type cpuReading struct {
	hub, postgres     uint64
	hubOK, postgresOK bool
}

func newCPUProbe(hubPID int, dsn string) cpuProbe {
	return cpuProbe{hubPID: hubPID, postgres: localDatabase(dsn)}
}

func (p cpuProbe) read() cpuReading {
	var r cpuReading
	if p.hubPID > 0 {
		if b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.hubPID), "stat")); err == nil {
			if _, ticks, err := benchmark.ProcStatTicks(string(b)); err == nil {
				r.hub, r.hubOK = ticks, true
			}
		}
	}
	if p.postgres {
		r.postgres, r.postgresOK = postgresTicks()
	}
	return r
}

// postgresTicks sums the CPU time of every process named postgres: the
// backends and the server's own workers. A backend that exits between two
// readings takes its time with it, so the figure is a floor.
func postgresTicks() (uint64, bool) {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil || len(stats) == 0 {
		return 0, false
	}
	var total uint64
	found := false
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // exited since the listing
		}
		if comm, ticks, err := benchmark.ProcStatTicks(string(b)); err == nil && comm == "postgres" {
			total += ticks
			found = true
		}
	}
	return total, found
}

// localDatabase reports whether dsn names a PostgreSQL on this machine,
// whose processes /proc shows.
func localDatabase(dsn string) bool {
	if dsn == "" {
		return false
	}
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return false
	}
	host := cfg.Host
	if strings.HasPrefix(host, "/") || host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hubPeakRSS is the hub's VmHWM in MiB, nil without its pid or when
// /proc does not show it.
func (p cpuProbe) hubPeakRSS() *float64 {
	if p.hubPID <= 0 {
		return nil
	}
	kib, ok := benchmark.ReadProcStatusKiB(p.hubPID, "VmHWM")
	if !ok {
		return nil
	}
	mib := float64(kib) / 1024
	return &mib
}

func cpuPerDelivery(before, after cpuReading, delivered int) benchmark.CPU {
	var c benchmark.CPU
	if before.hubOK && after.hubOK {
		c.HubMicros = benchmark.MicrosPerDelivery(before.hub, after.hub, delivered)
	}
	if before.postgresOK && after.postgresOK {
		c.PostgresMicros = benchmark.MicrosPerDelivery(before.postgres, after.postgres, delivered)
	}
	return c
}
