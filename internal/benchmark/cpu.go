package benchmark

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ProcStatTicks is the CPU time a process has used, user plus system, in
// clock ticks, from the content of /proc/<pid>/stat (proc(5): utime and
// stime are fields 14 and 15). The command name, field 2, is in
// parentheses and may itself hold spaces and parentheses, so fields are
// counted from the last ")". It also returns the name.
func ProcStatTicks(stat string) (comm string, ticks uint64, err error) {
	open, end := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return "", 0, errors.New("no command name in parentheses")
	}
	comm = stat[open+1 : end]
	// After ")": field 3 (state) onwards; utime is field 14, index 11.
	rest := strings.Fields(stat[end+1:])
	const utime, stime = 14 - 3, 15 - 3
	if len(rest) <= stime {
		return "", 0, fmt.Errorf("%d fields after the command name, want at least %d", len(rest), stime+1)
	}
	u, err := strconv.ParseUint(rest[utime], 10, 64)
	if err != nil {
		return "", 0, fmt.Errorf("utime: %w", err)
	}
	s, err := strconv.ParseUint(rest[stime], 10, 64)
	if err != nil {
		return "", 0, fmt.Errorf("stime: %w", err)
	}
	return comm, u + s, nil
}

// TicksPerSecond is USER_HZ, the unit of /proc's CPU times: 100 on every
// Linux architecture Go supports.
const TicksPerSecond = 100

// MicrosPerDelivery is the CPU time between two readings in ticks, per
// delivery, in microseconds; nil when nothing was delivered or the counter
// went backwards (a process restarted between the readings).
func MicrosPerDelivery(before, after uint64, delivered int) *float64 {
	if delivered <= 0 || after < before {
		return nil
	}
	used := time.Duration(after-before) * time.Second / TicksPerSecond
	v := float64(used) / float64(time.Microsecond) / float64(delivered)
	return &v
}

// ProcStatusKiB is a memory field (VmHWM, VmRSS, ...) of the content of
// /proc/<pid>/status, in KiB: proc(5) writes them as "VmHWM:	  123 kB".
func ProcStatusKiB(status, field string) (kib uint64, ok bool) {
	for line := range strings.Lines(status) {
		name, value, found := strings.Cut(line, ":")
		if !found || name != field {
			continue
		}
		fields := strings.Fields(value)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, false
		}
		n, err := strconv.ParseUint(fields[0], 10, 64)
		return n, err == nil
	}
	return 0, false
}

// ReadProcStatusKiB reads a memory field (ProcStatusKiB) of a live
// process; false when /proc does not show it.
func ReadProcStatusKiB(pid int, field string) (kib uint64, ok bool) {
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, false
	}
	return ProcStatusKiB(string(status), field)
}
