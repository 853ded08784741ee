package openstack

import (
	"bufio"
	"log"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/packer-plugin-sdk/multistep"
)

// The SDK's SSH step dials once every 5 s, so a guest whose sshd comes up
// just after a failed dial costs the build up to 5 s of idle waiting.
// bannerHost wraps the step's Host function: it returns the address only
// once sshd there has sent its identification line (RFC 4253 4.2), probing
// every bannerEvery, so the SDK's next dial, its first, connects. What the
// SDK prints, its timeout and its handshake retries are unchanged.
const (
	bannerEvery = 500 * time.Millisecond
	// bannerResolveEvery bounds how often the address is looked up again
	// (a Nova API call when there is no floating IP).
	bannerResolveEvery = 5 * time.Second
	bannerDialTimeout  = 2 * time.Second
)

// bannerHost returns host unchanged where the plugin cannot dial the guest
// itself (WinRM, a bastion, a SOCKS proxy): the SDK's own loop does it.
func bannerHost(c *Config, host func(multistep.StateBag) (string, error)) func(multistep.StateBag) (string, error) {
	if c.Comm.Type != "ssh" || c.Comm.SSHBastionHost != "" || c.Comm.SSHProxyHost != "" {
		return host
	}
	var deadline time.Time
	asked := false
	return func(state multistep.StateBag) (string, error) {
		if !asked {
			// the SDK's StepConnect asks once to print the address
			// before its wait (and its "Waiting for SSH" line) starts:
			// only the wait's calls probe
			asked = true
			return host(state)
		}
		if deadline.IsZero() && c.Comm.SSHTimeout > 0 {
			// the SDK gives up at ssh_timeout from its first call of Host
			deadline = time.Now().Add(c.Comm.SSHTimeout)
		}
		return waitBanner(state, host, strconv.Itoa(c.Comm.Port()), deadline)
	}
}

// waitBanner looks the address up and probes it until sshd answers, the
// build is cancelled or deadline passes; in the last two cases it returns
// what it has and lets the SDK's loop decide.
func waitBanner(state multistep.StateBag, host func(multistep.StateBag) (string, error), port string, deadline time.Time) (string, error) {
	var addr string
	var err error
	var resolved time.Time
	for {
		if addr == "" || time.Since(resolved) >= bannerResolveEvery {
			addr, err = host(state)
			resolved = time.Now()
		}
		if err == nil && sshBanner(net.JoinHostPort(addr, port)) {
			return addr, nil
		}
		if cancelled(state) || (!deadline.IsZero() && time.Now().After(deadline)) {
			return addr, err
		}
		time.Sleep(bannerEvery)
	}
}

// sshBanner reports whether an SSH server at address sends its
// identification line.
func sshBanner(address string) bool {
	conn, err := net.DialTimeout("tcp", address, bannerDialTimeout)
	if err != nil {
		return false
	}
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(bannerDialTimeout))
	r := bufio.NewReader(conn)
	// a server may send other lines before its identification
	for range 5 {
		line, err := r.ReadString('\n')
		if strings.HasPrefix(line, "SSH-") {
			return true
		}
		if err != nil {
			log.Printf("[DEBUG] no SSH identification from %s yet: %v", address, err)
			return false
		}
	}
	return false
}

func cancelled(state multistep.StateBag) bool {
	_, c := state.GetOk(multistep.StateCancelled)
	_, h := state.GetOk(multistep.StateHalted)
	return c || h
}
