// Package labtest starts a lab for a test binary and gives tests what they
// need around it: SSH into its VMs, a gophercloud client, and a check that
// a test left no cloud resource behind.
package labtest

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"golang.org/x/crypto/ssh"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
)

// CacheDir is where tests keep built repositories between runs.
func CacheDir() string { return lab.DefaultCacheDir() }

var (
	// unavailable is why the lab of this test binary did not start; Require
	// reports it.
	unavailable string
	// running is set while Main's lab runs.
	running bool
)

// Main probes the host (needs.Lab), starts a lab, runs the tests and stops
// it. When the host cannot run a lab, the tests still run without one:
// pure tests pass or fail as usual, and each lab test stops in Require,
// skipping with the reason, or failing under FATIMAGE_E2E=1, which also
// fails the package even when no lab test was selected.
func Main(m *testing.M, l **lab.Lab) int {
	if err := needs.Lab(); err != nil {
		return runWithout(m, err.Error())
	}
	dir, err := os.MkdirTemp("", "fatimage-lab-")
	if err != nil {
		fmt.Println("labtest:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	logf := func(string, ...any) {}
	if os.Getenv("LAB_VERBOSE") != "" {
		logf = func(f string, a ...any) { fmt.Printf(f+"\n", a...) }
	}
	started := time.Now()
	*l, err = lab.Start(context.Background(), lab.Options{Dir: dir, CacheDir: CacheDir(), Logf: logf})
	if err != nil {
		// A host that passed the probe but cannot start a lab is broken:
		// that fails with or without FATIMAGE_E2E.
		fmt.Println("labtest: starting the lab:", err)
		return 1
	}
	fmt.Printf("labtest: lab ready in %s\n", time.Since(started).Round(time.Millisecond))
	running = true
	code := m.Run()
	running = false
	bridge := (*l).Network.Bridge
	if err := (*l).Close(); err != nil {
		fmt.Println("labtest: closing the lab:", err)
		code = 1
	}
	if left := Leftovers(bridge); len(left) > 0 {
		fmt.Printf("labtest: the lab left network links behind:\n%s\n", strings.Join(left, "\n"))
		code = 1
	}
	return code
}

func runWithout(m *testing.M, why string) int {
	unavailable = "no lab: " + why
	fmt.Println("labtest:", unavailable)
	code := m.Run()
	if needs.Required() {
		fmt.Printf("labtest: FAIL: %s (and %s=1 requires the lab tests)\n", unavailable, needs.RequireEnv)
		code = 1
	}
	return code
}

// Require stops a test that needs the lab when this binary runs without
// one: a skip with the reason, or a failure under FATIMAGE_E2E=1. Call it
// first in every test that uses the lab (and in helpers that start builds).
func Require(tb testing.TB) {
	tb.Helper()
	switch {
	case unavailable != "":
		needs.Unavailable(tb, unavailable)
	case !running:
		tb.Fatal("labtest.Require: no lab: the package's TestMain does not call labtest.Main")
	}
}

// RequireClean fails the test if the cloud holds any resource; the lab
// starts with none but its preloaded images and flavors.
func RequireClean(t testing.TB, l *lab.Lab) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second) // deletions finish asynchronously
	for {
		st := l.Status()
		if st.Total() == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("resources left behind: %+v", st)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Provider authenticates to the lab's cloud as its user.
func Provider(ctx context.Context, l *lab.Lab) (*gophercloud.ProviderClient, error) {
	return openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{
		IdentityEndpoint: l.Cloud.AuthURL(), Username: "lab", Password: l.CloudPassword,
		TenantName: "lab", DomainName: "Default", AllowReauth: true,
	})
}

// Compute returns an authenticated compute client for the lab.
func Compute(ctx context.Context, l *lab.Lab) (*gophercloud.ServiceClient, error) {
	provider, err := Provider(ctx, l)
	if err != nil {
		return nil, err
	}
	return openstack.NewComputeV2(provider, gophercloud.EndpointOpts{Region: "RegionOne"})
}

// Server is a lab server booted by Boot, with the key to log in.
type Server struct {
	ID, Name, IP string
	Signer       ssh.Signer
	// PrivateKey is the key's PEM, for clients that read a key file (ansible).
	PrivateKey []byte
}

// Boot boots a server from an image (the base image when imageID is "")
// with a fresh keypair and waits for ACTIVE. The returned cleanup deletes both and checks the cloud is
// left clean.
func Boot(ctx context.Context, tb testing.TB, l *lab.Lab, name, imageID string) (*Server, func(), error) {
	if imageID == "" {
		imageID = l.BaseImageID
	}
	compute, err := Compute(ctx, l)
	if err != nil {
		return nil, nil, err
	}
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	sshPub, _ := ssh.NewPublicKey(pub)
	signer, _ := ssh.NewSignerFromKey(priv)
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		return nil, nil, err
	}
	if _, err := keypairs.Create(ctx, compute, keypairs.CreateOpts{Name: name, PublicKey: string(ssh.MarshalAuthorizedKey(sshPub))}).Extract(); err != nil {
		return nil, nil, err
	}
	var id string
	cleanup := func() {
		if id != "" {
			servers.Delete(context.Background(), compute, id)
		}
		keypairs.Delete(context.Background(), compute, name, nil)
		RequireClean(tb, l)
	}
	srv, err := servers.Create(ctx, compute, keypairs.CreateOptsExt{
		CreateOptsBuilder: servers.CreateOpts{Name: name, ImageRef: imageID, FlavorRef: "1", Networks: "auto"},
		KeyName:           name,
	}, nil).Extract()
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	id = srv.ID
	for {
		s, err := servers.Get(ctx, compute, srv.ID).Extract()
		switch {
		case err != nil:
			cleanup()
			return nil, nil, err
		case s.Status == "ERROR":
			cleanup()
			return nil, nil, fmt.Errorf("server went to ERROR: %v", s.Fault.Message)
		case s.Status == "ACTIVE":
			return &Server{ID: s.ID, Name: name, IP: firstAddress(s.Addresses), Signer: signer, PrivateKey: pem.EncodeToMemory(block)}, cleanup, nil
		}
		select {
		case <-ctx.Done():
			cleanup()
			return nil, nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Dial logs in to the server as the lab's SSH user, retrying while sshd
// starts.
func (s *Server) Dial(ctx context.Context) (*Client, error) {
	c, err := dial(ctx, s.IP, lab.SSHUser, s.Signer)
	if err != nil {
		return nil, err
	}
	return &Client{c}, nil
}

// BootAndSSH boots one server and returns how long after ACTIVE the first
// `sudo -n true` over SSH succeeded.
// BootDial boots a server and connects to it over SSH, failing tb on any
// error. stop closes the connection and deletes the server; it also runs
// when the test ends, so calling it early (before a leak check) is safe.
func BootDial(ctx context.Context, tb testing.TB, l *lab.Lab, name, imageID string) (srv *Server, c *Client, stop func()) {
	tb.Helper()
	srv, cleanup, err := Boot(ctx, tb, l, name, imageID)
	if err != nil {
		tb.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			if c != nil {
				c.Close()
			}
			cleanup()
		})
	}
	tb.Cleanup(stop)
	if c, err = srv.Dial(ctx); err != nil {
		tb.Fatal(err)
	}
	return srv, c, stop
}

func BootAndSSH(tb testing.TB, l *lab.Lab) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, cleanup, err := Boot(ctx, tb, l, fmt.Sprintf("bench-%d", time.Now().UnixNano()), "")
	if err != nil {
		return 0, err
	}
	defer cleanup()
	active := time.Now()
	c, err := srv.Dial(ctx)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	sess, err := c.NewSession()
	if err != nil {
		return 0, err
	}
	defer sess.Close()
	if out, err := sess.CombinedOutput("sudo -n true"); err != nil {
		return 0, fmt.Errorf("sudo -n true: %v: %s", err, out)
	}
	return time.Since(active), nil
}

func firstAddress(addrs map[string]any) string {
	for _, v := range addrs {
		list, _ := v.([]any)
		for _, a := range list {
			if m, ok := a.(map[string]any); ok {
				if s, ok := m["addr"].(string); ok {
					return s
				}
			}
		}
	}
	return ""
}

// dial retries until sshd answers and accepts the key, or ctx ends.
func dial(ctx context.Context, host, user string, signer ssh.Signer) (*ssh.Client, error) {
	cfg := &ssh.ClientConfig{
		User:            user,
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), // lab VMs make new host keys each build
		Timeout:         2 * time.Second,
	}
	var last error
	for {
		c, err := ssh.Dial("tcp", host+":22", cfg)
		if err == nil {
			return c, nil
		}
		last = err
		select {
		case <-ctx.Done():
			return nil, errors.Join(ctx.Err(), last)
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// Client is an SSH connection to a lab VM.
type Client struct{ *ssh.Client }

// SSH connects to host with the private key in keyFile, retrying up to
// timeout while the VM starts.
func SSH(t testing.TB, host, user, keyFile string, timeout time.Duration) *Client {
	t.Helper()
	pem, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(pem)
	if err != nil {
		t.Fatalf("parsing %s: %v", keyFile, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c, err := dial(ctx, host, user, signer)
	if err != nil {
		t.Fatalf("ssh %s@%s: %v", user, host, err)
	}
	return &Client{c}
}

// Run runs a shell command and returns its trimmed output, failing the
// test on a non-zero exit.
func (c *Client) Run(t testing.TB, cmd string) string {
	t.Helper()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	out, err := sess.CombinedOutput(cmd)
	if err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	return strings.TrimSpace(string(out))
}

// Leftovers lists network namespaces and links a lab with this bridge
// name would have made, for checks after Close.
func Leftovers(bridge string) []string {
	var out []string
	if b, _ := exec.Command("ip", "-o", "link", "show").Output(); len(b) > 0 {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, bridge) {
				out = append(out, line)
			}
		}
	}
	return out
}
