// Package freeport picks loopback TCP ports for servers the hub starts on
// its own (the development PostgreSQL, test brokers). Ports come from below
// the kernel's ephemeral range when it leaves room there: a port the kernel
// hands out for ":0" is also one it hands out as the source port of outgoing
// connections, so a server meant to come back on it after a restart could
// find it taken by a stray client, or a client redialling could connect to
// itself.
package freeport

import (
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
)

const (
	// lowestPort and ephemeralFallback bound the ports picked when the
	// kernel's ephemeral range is unknown: above the well-known and most
	// registered service ports, below every common ephemeral range
	// (Linux 32768-60999, IANA 49152-65535).
	lowestPort        = 20000
	ephemeralFallback = 32768
	// minPortChoice is the fewest candidates worth drawing from; a kernel
	// whose ephemeral range starts lower leaves the pick to the kernel.
	minPortChoice = 1000
	// pickTries bounds the draws for one port.
	pickTries = 50
)

// ephemeralRangeFile holds Linux's ephemeral port range, "low high".
const ephemeralRangeFile = "/proc/sys/net/ipv4/ip_local_port_range"

// handedOut holds every port Pick has returned in this process. A port is
// free from its check until its server binds it, and two callers in one
// process (parallel tests each starting a server) would otherwise be able
// to draw the same one in that window.
var handedOut struct {
	sync.Mutex
	ports []int
}

// Pick returns count distinct ports free on 127.0.0.1 right now, none of
// them in exclude nor returned by an earlier Pick in this process, outside
// the kernel's ephemeral range when it leaves room below it.
func Pick(count int, exclude ...int) ([]int, error) {
	high := ephemeralFallback
	if data, err := os.ReadFile(ephemeralRangeFile); err == nil {
		if low, ok := ephemeralLow(string(data)); ok {
			high = low
		}
	}
	handedOut.Lock()
	defer handedOut.Unlock()
	taken := slices.Concat(handedOut.ports, exclude)
	before := len(taken)
	for len(taken) < before+count {
		port, err := pickPort(lowestPort, high, taken)
		if err != nil {
			return nil, err
		}
		taken = append(taken, port)
	}
	picked := taken[before:]
	handedOut.ports = append(handedOut.ports, picked...)
	return picked, nil
}

// ephemeralLow parses the low end of ip_local_port_range.
func ephemeralLow(content string) (int, bool) {
	fields := strings.Fields(content)
	if len(fields) != 2 {
		return 0, false
	}
	low, err := strconv.Atoi(fields[0])
	if err != nil || low < 1 || low > 65535 {
		return 0, false
	}
	return low, true
}

// pickPort draws a port in [low, high) that is bindable and not in taken;
// when that range is too small it asks the kernel for one.
func pickPort(low, high int, taken []int) (int, error) {
	if high-low < minPortChoice {
		return kernelPort(taken)
	}
	for range pickTries {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(high-low)))
		if err != nil {
			return 0, err
		}
		port := low + int(n.Int64())
		if slices.Contains(taken, port) || !bindable(port) {
			continue
		}
		return port, nil
	}
	return 0, fmt.Errorf("no free port found in %d-%d after %d tries", low, high-1, pickTries)
}

func kernelPort(taken []int) (int, error) {
	for range pickTries {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := ln.Addr().(*net.TCPAddr).Port
		_ = ln.Close()
		if !slices.Contains(taken, port) {
			return port, nil
		}
	}
	return 0, errors.New("the kernel keeps offering ports already picked")
}

func bindable(port int) bool {
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return false
	}
	_ = ln.Close()
	return true
}
