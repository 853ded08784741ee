package pulpfake

import (
	"net"
	"sync"
	"time"
)

// Link is the network between a client and the server, as a real site's
// build VMs reach Ark across the internet: Delay each way (the round trip
// is twice it) and a bottleneck of Rate bytes per second shared by every
// connection of one client address. Clients on the server's own address
// (the lab's host) are not shaped. The kernel here has no netem, so the
// server's own listener plays the link. Zero values leave the link out.
type Link struct {
	Delay time.Duration
	Rate  int64 // bytes per second; 0: unlimited
}

// linkChunk bounds one paced write: pacing stays smooth at any rate.
const linkChunk = 64 << 10

// linkBurst is the idle time a client's path may bank: a sender that
// slept late (a loaded host oversleeps) catches up instead of losing the
// time, so the link runs at its rate; a transfer can beat bytes ÷ rate
// by at most this.
const linkBurst = 5 * time.Millisecond

// linkListener shapes every connection it accepts to the Link of the
// moment (link).
type linkListener struct {
	net.Listener
	link func() Link

	mu   sync.Mutex
	next map[string]time.Time // per client address: when its path is free
}

func newLinkListener(ln net.Listener, link func() Link) net.Listener {
	return &linkListener{Listener: ln, link: link, next: map[string]time.Time{}}
}

func (l *linkListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	link := l.link()
	host, _, _ := net.SplitHostPort(c.RemoteAddr().String())
	local, _, _ := net.SplitHostPort(c.LocalAddr().String())
	if host == local || (link.Delay <= 0 && link.Rate <= 0) {
		return c, nil
	}
	lc := &linkConn{Conn: c, l: l, link: link, host: host, out: make(chan timedChunk, 256), done: make(chan struct{})}
	go lc.deliver()
	return lc, nil
}

// reserve books n bytes on host's path at rate: when they have left the
// bottleneck (the path is busy until then for the client's other
// connections).
func (l *linkListener) reserve(host string, n int, rate int64) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	at := l.next[host]
	if floor := time.Now().Add(-linkBurst); at.Before(floor) {
		at = floor
	}
	if rate > 0 {
		at = at.Add(time.Duration(float64(n) / float64(rate) * float64(time.Second)))
	}
	l.next[host] = at
	return at
}

type timedChunk struct {
	b  []byte
	at time.Time // when it reaches the client
}

// linkConn delays what the client sent by Delay, and paces what the
// server sends through the client's bottleneck, delivering it Delay
// later: a delay line, so the link stays full while data is in flight.
type linkConn struct {
	net.Conn
	l    *linkListener
	link Link
	host string

	out    chan timedChunk
	done   chan struct{}
	sendMu sync.Mutex // held while sending on out; out is closed under it
	closed bool
	errMu  sync.Mutex
	err    error
}

func (c *linkConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		time.Sleep(c.link.Delay)
	}
	return n, err
}

func (c *linkConn) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		if err := c.writeErr(); err != nil {
			return written, err
		}
		n := min(len(p), linkChunk)
		left := c.l.reserve(c.host, n, c.link.Rate)
		if wait := time.Until(left); wait > 0 {
			time.Sleep(wait) // the sender waits for the bottleneck
		}
		if !c.send(timedChunk{b: append([]byte(nil), p[:n]...), at: time.Now().Add(c.link.Delay)}) {
			return written, net.ErrClosed
		}
		written += n
		p = p[n:]
	}
	return written, nil
}

// deliver writes each chunk when it reaches the client.
func (c *linkConn) deliver() {
	defer close(c.done)
	for ch := range c.out {
		time.Sleep(time.Until(ch.at))
		if c.writeErr() != nil {
			continue
		}
		if _, err := c.Conn.Write(ch.b); err != nil {
			c.errMu.Lock()
			c.err = err
			c.errMu.Unlock()
		}
	}
}

func (c *linkConn) writeErr() error {
	c.errMu.Lock()
	defer c.errMu.Unlock()
	return c.err
}

func (c *linkConn) send(ch timedChunk) bool {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if c.closed {
		return false
	}
	c.out <- ch
	return true
}

// Close delivers what is in flight (to a client that still reads), then
// closes.
func (c *linkConn) Close() error {
	_ = c.Conn.SetWriteDeadline(time.Now().Add(c.link.Delay + 10*time.Second))
	c.sendMu.Lock()
	if !c.closed {
		c.closed = true
		close(c.out)
	}
	c.sendMu.Unlock()
	<-c.done
	return c.Conn.Close()
}
