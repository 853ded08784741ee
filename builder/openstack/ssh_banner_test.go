package openstack

import (
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/packer-plugin-sdk/multistep"
)

// serveBanner accepts on l and writes lines to each connection.
func serveBanner(t *testing.T, l net.Listener, lines string) {
	t.Helper()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte(lines))
			_ = c.Close()
		}
	}()
}

func listen(t *testing.T, addr string) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func TestSSHBanner(t *testing.T) {
	ok := listen(t, "127.0.0.1:0")
	serveBanner(t, ok, "SSH-2.0-OpenSSH_8.7\r\n")
	pre := listen(t, "127.0.0.1:0")
	serveBanner(t, pre, "welcome\r\nSSH-2.0-OpenSSH_8.7\r\n")
	http := listen(t, "127.0.0.1:0")
	serveBanner(t, http, "HTTP/1.1 400 Bad Request\r\n")
	silent := listen(t, "127.0.0.1:0") // accepts (backlog), never writes
	closed := listen(t, "127.0.0.1:0")
	closedAddr := closed.Addr().String()
	_ = closed.Close()
	for _, c := range []struct {
		name, addr string
		want       bool
	}{
		{"sshd", ok.Addr().String(), true},
		{"lines before the identification", pre.Addr().String(), true},
		{"another server", http.Addr().String(), false},
		{"accepted, nothing sent", silent.Addr().String(), false},
		{"nothing listening", closedAddr, false},
	} {
		if got := sshBanner(c.addr); got != c.want {
			t.Errorf("%s: sshBanner(%s) = %v, want %v", c.name, c.addr, got, c.want)
		}
	}
}

// freePort returns a loopback address nothing listens on yet.
func freePort(t *testing.T) (string, string) {
	t.Helper()
	l := listen(t, "127.0.0.1:0")
	addr := l.Addr().(*net.TCPAddr)
	_ = l.Close()
	return "127.0.0.1", strconv.Itoa(addr.Port)
}

// sshConfig is a Config whose communicator is SSH to port on the guest,
// with ssh_timeout timeout (none when 0).
func sshConfig(t *testing.T, port string, timeout time.Duration) *Config {
	t.Helper()
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	c := &Config{}
	c.Comm.Type = "ssh"
	c.Comm.SSHPort = p
	c.Comm.SSHTimeout = timeout
	return c
}

func TestWaitBannerReturnsWhenSSHDStarts(t *testing.T) {
	host, port := freePort(t)
	var lookups atomic.Int32
	lookup := func(multistep.StateBag) (string, error) { lookups.Add(1); return host, nil }
	go func() {
		time.Sleep(1200 * time.Millisecond)
		l, err := net.Listen("tcp", net.JoinHostPort(host, port))
		if err != nil {
			t.Error(err)
			return
		}
		t.Cleanup(func() { _ = l.Close() })
		serveBanner(t, l, "SSH-2.0-test\r\n")
	}()
	got, err := waitBanner(new(multistep.BasicStateBag), lookup, port, time.Now().Add(time.Minute))
	if err != nil || got != host {
		t.Fatalf("waitBanner = %q, %v; want %q", got, err, host)
	}
	if !sshBanner(net.JoinHostPort(host, port)) {
		t.Fatal("waitBanner returned before sshd answered")
	}
	// several probes, one address lookup: the lookup may be a Nova call
	if n := lookups.Load(); n != 1 {
		t.Errorf("address looked up %d times in under %s, want 1", n, bannerResolveEvery)
	}
}

func TestWaitBannerGivesUp(t *testing.T) {
	host, port := freePort(t)
	lookup := func(multistep.StateBag) (string, error) { return host, nil }
	cancelledState := new(multistep.BasicStateBag)
	cancelledState.Put(multistep.StateCancelled, true)
	for name, c := range map[string]struct {
		state    multistep.StateBag
		deadline time.Time
	}{
		"cancelled":   {cancelledState, time.Now().Add(time.Hour)},
		"ssh_timeout": {new(multistep.BasicStateBag), time.Now().Add(-time.Second)},
	} {
		done := make(chan string, 1)
		go func() {
			got, _ := waitBanner(c.state, lookup, port, c.deadline)
			done <- got
		}()
		select {
		case got := <-done:
			if got != host {
				t.Errorf("%s: waitBanner = %q, want the address %q for the SDK's own loop", name, got, host)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: waitBanner still waiting for an sshd that never starts", name)
		}
	}
}

func TestBannerHostLeavesIndirectConnectionsToTheSDK(t *testing.T) {
	_, port := freePort(t)
	for name, set := range map[string]func(*Config){
		"winrm":   func(c *Config) { c.Comm.Type = "winrm" },
		"bastion": func(c *Config) { c.Comm.SSHBastionHost = "bastion.example" },
		"proxy":   func(c *Config) { c.Comm.SSHProxyHost = "proxy.example" },
	} {
		c := sshConfig(t, port, 0)
		set(c)
		h := bannerHost(c, func(multistep.StateBag) (string, error) { return "127.0.0.1", nil })
		done := make(chan struct{})
		go func() { _, _ = h(new(multistep.BasicStateBag)); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("%s: the plugin probed a guest it cannot reach directly", name)
		}
	}
}

func TestBannerHostWaitsForSSHD(t *testing.T) {
	_, port := freePort(t)
	c := sshConfig(t, port, 1500*time.Millisecond)
	h := bannerHost(c, func(multistep.StateBag) (string, error) { return "127.0.0.1", nil })
	_, _ = h(new(multistep.BasicStateBag)) // the SDK's first call (TestBannerHostFirstCallOnlyAsks)
	start := time.Now()
	got, err := h(new(multistep.BasicStateBag))
	if err != nil || got != "127.0.0.1" {
		t.Fatalf("host = %q, %v", got, err)
	}
	if waited := time.Since(start); waited < time.Second {
		t.Errorf("returned after %s with nothing listening: it should probe until ssh_timeout", waited)
	}
}

// The SDK's StepConnect asks for the address once to print it before its
// wait starts: that call must not wait for sshd (with no ssh_timeout it
// would wait for ever, and the "Waiting for SSH" line would come late).
func TestBannerHostFirstCallOnlyAsks(t *testing.T) {
	_, port := freePort(t)
	c := sshConfig(t, port, 0)
	h := bannerHost(c, func(multistep.StateBag) (string, error) { return "127.0.0.1", nil })
	first := make(chan struct{})
	go func() { _, _ = h(new(multistep.BasicStateBag)); close(first) }()
	select {
	case <-first:
	case <-time.After(10 * time.Second):
		t.Fatal("the first call (the SDK's \"Using SSH communicator\" line) waited for sshd")
	}
}
