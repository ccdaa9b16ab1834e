package devenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/jackc/pgx/v5"
)

// PortInUseError reports that a port asked for explicitly is held by
// someone else. Callers that chose the port for the user (a command-line
// flag) name that flag; devenv does not know it.
type PortInUseError struct {
	Service string // "PostgreSQL", "Kafka"
	Port    int
}

func (e *PortInUseError) Error() string {
	return fmt.Sprintf("%s port %d on 127.0.0.1 is already in use by another process", e.Service, e.Port)
}

// CheckPortFree fails with a PortInUseError when something already listens
// on 127.0.0.1:port. A server bound after this check is caught later, by the
// identity check or the bind failure of our own server.
func CheckPortFree(service string, port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return &PortInUseError{Service: service, Port: port}
		}
		return fmt.Errorf("check %s port %d: %w", service, port, err)
	}
	return l.Close()
}

// errNotOurServer means a server answered on our port but serves another
// cluster: our own server lost the race for the port and is about to exit.
var errNotOurServer = errors.New("the server answering on the port serves another cluster")

// verifyIdentity checks that the server conn reached runs the cluster in
// dataDir. Nothing may be written to a server before this passes: with the
// port taken, the connection reaches whoever holds it.
func verifyIdentity(ctx context.Context, conn *pgx.Conn, dataDir string) error {
	var serving string
	if err := conn.QueryRow(ctx, "SHOW data_directory").Scan(&serving); err != nil {
		return fmt.Errorf("ask the server for its data directory: %w", err)
	}
	if samePath(serving, dataDir) {
		return nil
	}
	return fmt.Errorf("%w (%s, not %s)", errNotOurServer, serving, dataDir)
}

func samePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb
}
