package labtest

import (
	"errors"
	"net"
	"time"
)

// DialTCP connects to addr (host:port) and hangs up: nil when something
// answered.
func DialTCP(addr string, timeout time.Duration) error {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err == nil {
		c.Close()
	}
	return err
}

// Dropped says a DialTCP error is no answer at all (a firewall's drop),
// not a refusal.
func Dropped(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
