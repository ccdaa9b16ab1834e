package dev

import (
	"errors"
	"fmt"
	"net"
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
			if busy := portError(err, ports...); busy != nil {
				return busy
			}
			return err
		}
	}
	return nil
}

// portError is the one line naming the flag that moves a busy port, or nil
// when err is not about a busy port.
func portError(err error, ports ...busyPort) error {
	var busy *devenv.PortInUseError
	if !errors.As(err, &busy) {
		return nil
	}
	for _, p := range ports {
		if p.service == busy.Service {
			return fmt.Errorf("%s port %d is already in use (another hubctl dev?): choose another with %s", busy.Service, busy.Port, p.flag)
		}
	}
	return err
}

// checkListen fails when the HTTP API's address is taken, before dev mode
// starts anything.
func checkListen(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		if busy := listenError(err, addr); busy != nil {
			return busy
		}
		return nil // hub.Run reports what else is wrong with the address
	}
	return l.Close()
}

// listenError is the one line naming --listen when err says the HTTP API's
// address is taken, or nil.
func listenError(err error, addr string) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("HTTP API address %s is already in use (another hubctl dev?): choose another with --listen", addr)
	}
	return nil
}
