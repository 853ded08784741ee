package lab

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Proxy is a real forward proxy, Debian's tinyproxy, on the lab gateway
// address the VMs reach the content servers at, demanding Basic proxy
// credentials as a site's squid with proxy_basic_password does. Tests
// start one when they need it (StartProxy) and cut the VMs off the
// content servers (SetServerReachableFromVMs): the proxy, on the host,
// still reaches them.
type Proxy struct {
	// Host and Port are where the VMs reach it.
	Host, Port string
	dir        string
	cmd        *exec.Cmd
}

// StartProxy starts tinyproxy for user and password (which must hold no
// space or quote: tinyproxy's configuration has no quoting for them).
func (l *Lab) StartProxy(user, password string) (*Proxy, error) {
	if strings.ContainsAny(user+password, " \t\n\"'") {
		return nil, fmt.Errorf("lab: proxy credentials may hold no space or quote")
	}
	u, err := url.Parse(l.Env["ARK_CONTENT_URL"])
	if err != nil {
		return nil, err
	}
	host := u.Hostname()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	_ = ln.Close()
	dir, err := os.MkdirTemp("", "lab-proxy-")
	if err != nil {
		return nil, err
	}
	conf := fmt.Sprintf("Port %s\nListen %s\nTimeout 600\nMaxClients 200\nLogLevel Info\nDisableViaHeader Yes\nBasicAuth %s %s\n",
		port, host, user, password)
	if err := os.WriteFile(filepath.Join(dir, "tinyproxy.conf"), []byte(conf), 0o600); err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "log"))
	if err != nil {
		return nil, err
	}
	defer log.Close()
	cmd := exec.Command("tinyproxy", "-d", "-c", filepath.Join(dir, "tinyproxy.conf"))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("lab: tinyproxy: %w", err)
	}
	p := &Proxy{Host: host, Port: port, dir: dir, cmd: cmd}
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", net.JoinHostPort(host, port), time.Second)
		if err == nil {
			_ = c.Close()
			break
		}
		if i == 50 {
			log, _ := os.ReadFile(filepath.Join(dir, "log"))
			p.Close()
			return nil, fmt.Errorf("lab: tinyproxy did not listen on %s:%s: %s", host, port, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
	l.Logf("lab: proxy (tinyproxy) on %s:%s", host, port)
	return p, nil
}

// Log is what tinyproxy logged: each connection and request line.
func (p *Proxy) Log() string {
	b, _ := os.ReadFile(filepath.Join(p.dir, "log"))
	return string(b)
}

// Opened counts the connections the proxy opened to a server (its URL's
// host:port) for requests it let through (those with the right
// credentials).
func (p *Proxy) Opened(serverURL string) int {
	u, err := url.Parse(serverURL)
	if err != nil {
		return 0
	}
	return strings.Count(p.Log(), "opening connection to "+u.Host+"\n")
}

// Close stops tinyproxy and removes its files.
func (p *Proxy) Close() {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	}
	_ = os.RemoveAll(p.dir)
}
