package rabbitnode

import (
	"net"
	"strconv"
)

// canConnect reports whether something accepts connections on port.
func canConnect(port int) bool {
	conn, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), pollInterval)
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}
