package openstack

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
	"golang.org/x/crypto/ssh"
)

// sshGuest is an SSH server standing in for the build VM: it admits only
// keys the cloud's metadata service gives the server (as cloud-init would)
// and records the commands it is asked to run without running them.
type sshGuest struct {
	addr string
	mu   sync.Mutex
	cmds []string
	keys int // successful key logins
}

func startSSHGuest(t *testing.T, authorized func(ssh.PublicKey) bool) *sshGuest {
	t.Helper()
	_, hostPriv, _ := ed25519.GenerateKey(rand.Reader)
	signer, err := ssh.NewSignerFromKey(hostPriv)
	if err != nil {
		t.Fatal(err)
	}
	g := &sshGuest{}
	cfg := &ssh.ServerConfig{PublicKeyCallback: func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
		if authorized(key) {
			g.mu.Lock()
			g.keys++
			g.mu.Unlock()
			return nil, nil
		}
		return nil, errors.New("key not authorized")
	}}
	cfg.AddHostKey(signer)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	g.addr = ln.Addr().String()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go g.serve(conn, cfg)
		}
	}()
	return g
}

func (g *sshGuest) serve(conn net.Conn, cfg *ssh.ServerConfig) {
	_, chans, reqs, err := ssh.NewServerConn(conn, cfg)
	if err != nil {
		conn.Close()
		return
	}
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "only sessions") // the client sees the refusal
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			continue
		}
		go func() {
			defer ch.Close()
			for req := range creqs {
				if req.Type != "exec" {
					_ = req.Reply(true, nil) // a closed channel ends the loop
					continue
				}
				var p struct{ Command string }
				if err := ssh.Unmarshal(req.Payload, &p); err != nil {
					_ = req.Reply(false, nil)
					return
				}
				g.mu.Lock()
				g.cmds = append(g.cmds, p.Command)
				g.mu.Unlock()
				_ = req.Reply(true, nil)
				_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{0})) // a client that left reads no status
				return
			}
		}()
	}
}

func (g *sshGuest) commands() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return strings.Join(g.cmds, "\n")
}

// A build over SSH with a temporary key: the key reaches the server
// through Nova, the provisioner gets a working communicator, and
// ssh_clear_authorized_keys removes the key by its build-named comment.
func TestBuildOverSSHWithTemporaryKey(t *testing.T) {
	l := newLab(t, nil)
	clearOSEnv(t)
	probeCfg := l.config(t)
	cl, err := newClients(context.Background(), &probeCfg.AccessConfig, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	// What cloud-init on the server would install from the metadata service.
	authorized := func(key ssh.PublicKey) bool {
		pages, err := servers.List(cl.compute, servers.ListOpts{}).AllPages(context.Background())
		if err != nil {
			return false
		}
		all, _ := servers.ExtractServers(pages)
		for _, s := range all {
			ip, err := pickAddress(s.Addresses, "", "4")
			if err != nil {
				continue
			}
			md := l.c.MetadataFor(ip)
			if md == nil || md.Meta["ansible_init_disable"] != "true" {
				continue
			}
			for _, pub := range md.PublicKeys {
				if k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(pub)); err == nil && bytes.Equal(k.Marshal(), key.Marshal()) {
					return true
				}
			}
		}
		return false
	}
	guest := startSSHGuest(t, authorized)
	host, port, _ := net.SplitHostPort(guest.addr)
	portN, _ := strconv.Atoi(port)

	var ran string
	hook := &packersdk.MockHook{}
	hook.RunFunc = func(ctx context.Context) error {
		cmd := &packersdk.RemoteCmd{Command: "dnf -y update"}
		if err := cmd.RunWithUi(ctx, hook.RunComm, packersdk.TestUi(t)); err != nil {
			return err
		}
		ran = cmd.Command
		return nil
	}
	b, art, ui, err := build(t, context.Background(), l, hook,
		"communicator", "ssh", "ssh_username", "rocky", "ssh_host", host, "ssh_port", portN,
		"ssh_timeout", "20s", "ssh_clear_authorized_keys", true)
	if err != nil {
		t.Fatalf("build: %v\n%s", err, ui.errors())
	}
	if art == nil || ran == "" {
		t.Fatalf("artifact %v, provisioner ran %q", art, ran)
	}
	cmds := guest.commands()
	if !strings.Contains(cmds, "dnf -y update") || !strings.Contains(cmds, b.config.Comm.SSHTemporaryKeyPairName) {
		t.Errorf("commands seen by the guest:\n%s", cmds)
	}
	l.assertEmpty(t)
}
