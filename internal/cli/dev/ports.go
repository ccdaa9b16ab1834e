package dev

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/hubctl/hubctl/internal/devenv"
)

// busyPort is a port dev mode was asked to use and the flag that moves it.
type busyPort struct {
	service string // as devenv names it: "PostgreSQL", "Kafka"
	port    int
	flag    string
}

// checkPorts fails, before anything is started or written, when a port
// dev mode needs is taken: by a second `hubctl dev` most likely, whose
// PostgreSQL dev mode must never mistake for its own. Port 0 picks a free
// port and cannot be busy.
func checkPorts(ports ...busyPort) error {
	for _, p := range ports {
		if p.port == 0 {
			continue
		}
		if err := devenv.CheckPortFree(p.service, p.port); err != nil {
			return explainPort(err, ports...)
		}
	}
	return nil
}

// explainPort turns a busy port into one line naming the flag that moves
// it; other errors pass through.
func explainPort(err error, ports ...busyPort) error {
	var busy *devenv.PortInUseError
	if !errors.As(err, &busy) {
		return err
	}
	for _, p := range ports {
		if p.service == busy.Service {
			return fmt.Errorf("%s port %d is already in use (another hubctl dev?): choose another with %s", busy.Service, busy.Port, p.flag)
		}
	}
	return err
}

// explainListen names --listen when the HTTP API's address is taken.
func explainListen(err error, addr string) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("HTTP API address %s is already in use (another hubctl dev?): choose another with --listen", addr)
	}
	return err
}
