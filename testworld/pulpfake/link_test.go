package pulpfake

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// linkServer serves size bytes at / behind a Link.
func linkServer(t *testing.T, l Link, size int) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("x"), size)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) }), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(newLinkListener(ln, func() Link { return l })) //nolint:errcheck // ErrServerClosed
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String() + "/"
}

// remoteClient connects from 127.0.0.3, an address other than the
// server's (the lab's host is not shaped).
func remoteClient() *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 3)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
}

func get(t *testing.T, c *http.Client, url string) int {
	t.Helper()
	r, err := c.Get(url)
	if err != nil {
		t.Error(err)
		return 0
	}
	defer r.Body.Close()
	n, err := io.Copy(io.Discard, r.Body)
	if err != nil {
		t.Error(err)
	}
	return int(n)
}

// The link is a lower bound: N bytes take at least N / Rate, and one
// request at least the round trip (2 x Delay), however fast the host.
func TestLinkBoundsTransfers(t *testing.T) {
	const size, rate, delay = 4 << 20, 16 << 20, 20 * time.Millisecond
	url := linkServer(t, Link{Delay: delay, Rate: rate}, size)
	c := remoteClient()
	start := time.Now()
	if n := get(t, c, url); n != size {
		t.Fatalf("got %d bytes, want %d", n, size)
	}
	floor := time.Duration(float64(size)/rate*float64(time.Second)) + 2*delay - linkBurst
	if took := time.Since(start); took < floor {
		t.Errorf("%d bytes at %d B/s with %s each way took %s, below the floor %s", size, rate, delay, took, floor)
	}
	// a tiny answer on a kept-alive connection: one round trip
	small := linkServer(t, Link{Delay: delay, Rate: rate}, 10)
	get(t, c, small)
	start = time.Now()
	get(t, c, small)
	if took := time.Since(start); took < 2*delay {
		t.Errorf("a request took %s, below the round trip %s", took, 2*delay)
	}
}

// One client's connections share its bottleneck: parallel downloads do not
// multiply the rate.
func TestLinkRateIsPerClient(t *testing.T) {
	const size, rate, conns = 2 << 20, 16 << 20, 4
	url := linkServer(t, Link{Rate: rate}, size)
	start := time.Now()
	var wg sync.WaitGroup
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			get(t, remoteClient(), url)
		}()
	}
	wg.Wait()
	floor := time.Duration(float64(conns*size)/rate*float64(time.Second)) - linkBurst
	if took := time.Since(start); took < floor {
		t.Errorf("%d parallel downloads of %d bytes took %s, below the shared floor %s", conns, size, took, floor)
	}
}

// The lab's host (a client on the server's own address) is not behind the
// link: the data source and host-side fetches keep their own figures.
func TestLinkLeavesTheHostOut(t *testing.T) {
	const size, rate = 4 << 20, 1 << 20
	url := linkServer(t, Link{Delay: time.Second, Rate: rate}, size)
	start := time.Now()
	get(t, &http.Client{Transport: &http.Transport{}}, url)
	if took := time.Since(start); took > time.Second {
		t.Errorf("the server's own host was shaped: %s", took)
	}
}

func TestNoLinkIsTheBareConn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 3)}}
		if c, err := d.Dial("tcp", ln.Addr().String()); err == nil {
			defer c.Close()
			time.Sleep(time.Second)
		}
	}()
	c, err := newLinkListener(ln, func() Link { return Link{} }).Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.(*linkConn); ok {
		t.Error("a zero Link shapes the connection")
	}
}
