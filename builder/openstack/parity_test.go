package openstack

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/attachinterfaces"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/hashicorp/packer-plugin-sdk/multistep"
	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
	"golang.org/x/crypto/ssh"
)

// The server's NICs: the template's ports first, then its networks, as
// the official builder attaches them; and its name is the image's.
func TestStepRunServerPortsFirstNamedAfterImage(t *testing.T) {
	l := newLab(t, nil)
	c := l.config(t)
	state, _ := newState(t, c)
	runSteps(t, bg, state, &StepAuthenticate{})
	cl := state.Get("clients").(*clients)
	netID, err := findNetwork(bg, cl, "test", "lab-net")
	if err != nil {
		t.Fatal(err)
	}
	port, err := ports.Create(bg, cl.network, ports.CreateOpts{NetworkID: netID, Name: "site-port"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	defer ports.Delete(bg, cl.network, port.ID)

	c = l.config(t, "networks", []string{netID}, "ports", []string{port.ID}, "image_name", "openhpc-251122-1400-0123abcd")
	state, ui := newState(t, c)
	var nics []string
	var name string
	runSteps(t, bg, state, &StepAuthenticate{}, &StepLoadFlavor{}, &StepSourceImage{}, &StepDiscoverNetwork{}, &StepRunServer{},
		probe(func(state multistep.StateBag) {
			id := state.Get("server_id").(string)
			pages, err := attachinterfaces.List(cl.compute, id).AllPages(bg)
			if err != nil {
				t.Fatal(err)
			}
			all, _ := attachinterfaces.ExtractInterfaces(pages)
			for _, i := range all {
				nics = append(nics, i.PortID)
			}
			srv, _ := servers.Get(bg, cl.compute, id).Extract()
			name = srv.Name
		}), haltStep{})
	if len(nics) != 2 || nics[0] != port.ID {
		t.Errorf("NICs %v, want the port %s first\n%s", nics, port.ID, ui.errors())
	}
	if name != "openhpc-251122-1400-0123abcd" {
		t.Errorf("server name %q, want the image name", name)
	}
	l.assertEmptyBut(t, 1)
}

// assertEmptyBut is assertEmpty for a test holding ports of its own.
func (l *lab) assertEmptyBut(t *testing.T, ownPorts int) {
	t.Helper()
	st := l.c.Status()
	if st.Total() != ownPorts || len(st.Ports) != ownPorts {
		t.Errorf("leftovers: %+v", st)
	}
}

// reuse_ips takes a free floating IP (on floating_ip_network if given),
// never allocates, fails when there is none, and only detaches on cleanup.
func TestStepFloatingIPReuse(t *testing.T) {
	l := newLab(t, nil)
	c := l.config(t, "reuse_ips", true)
	state, ui := newState(t, c)
	runSteps(t, bg, state, &StepAuthenticate{}, &StepLoadFlavor{}, &StepSourceImage{}, &StepRunServer{}, &StepFloatingIP{}, haltStep{})
	if err := stateErr(state); err == nil || err.Error() != "reuse_ips: the project has no free (DOWN, unattached) floating IP" {
		t.Errorf("no free IP: err %v\n%s", err, ui.errors())
	}
	cl := state.Get("clients").(*clients)
	if pages, _ := floatingips.List(cl.network, floatingips.ListOpts{}).AllPages(bg); pages != nil {
		if all, _ := floatingips.ExtractFloatingIPs(pages); len(all) != 0 {
			t.Errorf("reuse_ips allocated %d floating IPs", len(all))
		}
	}
	pub, _ := findNetwork(bg, cl, "test", "public")
	fip, err := floatingips.Create(bg, cl.network, floatingips.CreateOpts{FloatingNetworkID: pub}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][]any{{"reuse_ips", true}, {"reuse_ips", true, "floating_ip_network", "public"}} {
		c := l.config(t, kv...)
		state, ui := newState(t, c)
		var attached string
		runSteps(t, bg, state, &StepAuthenticate{}, &StepLoadFlavor{}, &StepSourceImage{}, &StepRunServer{}, &StepFloatingIP{},
			probe(func(state multistep.StateBag) { attached = getString(state, "floating_ip") }), haltStep{})
		if attached != fip.FloatingIP {
			t.Errorf("%v: attached %q, want the free %s\n%s", kv, attached, fip.FloatingIP, ui.errors())
		}
		got, err := floatingips.Get(bg, cl.network, fip.ID).Extract()
		if err != nil || got.PortID != "" {
			t.Errorf("%v: a reused floating IP must stay, detached: %+v %v", kv, got, err)
		}
	}
	c = l.config(t, "reuse_ips", true, "floating_ip_network", "lab-net")
	state, _ = newState(t, c)
	runSteps(t, bg, state, &StepAuthenticate{}, &StepLoadFlavor{}, &StepSourceImage{}, &StepRunServer{}, &StepFloatingIP{}, haltStep{})
	if err := stateErr(state); err == nil || !strings.HasPrefix(err.Error(), "reuse_ips: the project has no free (DOWN, unattached) floating IP on network ") {
		t.Errorf("free IP on another network was taken: %v", err)
	}
	floatingips.Delete(bg, cl.network, fip.ID)
	l.assertEmpty(t)
}

// On the volume path the metadata reaches the volume before the upload
// (os-set_image_metadata), so Cinder's upload carries it into the image,
// image_type = image included.
func TestStepCreateImageFromVolumeCarriesMetadata(t *testing.T) {
	l := newLab(t, nil)
	c := l.config(t, "use_blockstorage_volume", true, "metadata", map[string]string{"site": "lab"})
	state, ui := newState(t, c)
	var props map[string]any
	var volMeta map[string]string
	runSteps(t, bg, state, &StepAuthenticate{}, &StepLoadFlavor{}, &StepSourceImage{}, &StepCreateVolume{},
		probe(func(state multistep.StateBag) {
			cl := state.Get("clients").(*clients)
			v, err := volumes.Get(bg, cl.volume, getString(state, "volume_id")).Extract()
			if err != nil {
				t.Fatal(err)
			}
			volMeta = v.Metadata
		}),
		&StepRunServer{}, &StepStopServer{}, &StepCreateImage{},
		probe(func(state multistep.StateBag) {
			// Before StepUpdateImage: what Cinder's upload alone made.
			cl := state.Get("clients").(*clients)
			img, err := images.Get(bg, cl.image, getString(state, "image_id")).Extract()
			if err != nil {
				t.Fatal(err)
			}
			props = img.Properties
		}), haltStep{})
	if props["image_type"] != "image" || props["site"] != "lab" {
		t.Errorf("uploaded image properties %v, want image_type = image and site = lab\n%s", props, ui.errors())
	}
	if volMeta["image_type"] != "image" || volMeta["site"] != "lab" || volMeta[BuildIDKey] != c.buildID {
		t.Errorf("volume metadata %v", volMeta)
	}
	l.assertEmpty(t)
}

// image_creation_wait: that many seconds after active, and Ctrl-C ends
// the wait at once.
func TestStepCreateImageExtraWait(t *testing.T) {
	l := newLab(t, nil)
	c := l.config(t, "image_creation_wait", 1)
	state, ui := newState(t, c)
	var waited time.Duration
	runSteps(t, bg, state, &StepAuthenticate{}, &StepLoadFlavor{}, &StepSourceImage{}, &StepRunServer{}, &StepStopServer{},
		timed(&StepCreateImage{}, &waited))
	if err := stateErr(state); err != nil {
		t.Fatalf("%v\n%s", err, ui.errors())
	}
	if waited < time.Second {
		t.Errorf("the step took %s, want at least the extra 1 s", waited)
	}
	cl := state.Get("clients").(*clients)
	if err := deleteImage(bg, cl, getString(state, "image_id"), time.Minute); err != nil {
		t.Fatal(err)
	}

	c = l.config(t, "image_creation_wait", 3600)
	state, ui = newState(t, c)
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	// Ctrl-C as soon as the extra wait starts.
	state.Put("ui", packersdk.Ui(&onMessage{testUI: ui, prefix: "Waiting 3600 more seconds", f: cancel}))
	waited = 0
	runSteps(t, ctx, state, &StepAuthenticate{}, &StepLoadFlavor{}, &StepSourceImage{}, &StepRunServer{}, &StepStopServer{},
		timed(&StepCreateImage{}, &waited))
	if err := stateErr(state); err == nil || err.Error() != "image_creation_wait: context canceled" {
		t.Errorf("cancelled wait: %v", err)
	}
	if waited > time.Minute {
		t.Errorf("Ctrl-C did not end the extra wait (%s)", waited)
	}
	l.assertEmpty(t)
}

// onMessage calls f when the build says something starting with prefix.
type onMessage struct {
	*testUI
	prefix string
	f      func()
}

func (u *onMessage) Say(m string) {
	u.testUI.Say(m)
	if strings.HasPrefix(m, u.prefix) {
		u.f()
	}
}

type timedStep struct {
	multistep.Step
	took *time.Duration
}

func timed(s multistep.Step, took *time.Duration) multistep.Step { return timedStep{s, took} }

func (s timedStep) Run(ctx context.Context, state multistep.StateBag) multistep.StepAction {
	start := time.Now()
	defer func() { *s.took = time.Since(start) }()
	return s.Step.Run(ctx, state)
}

// WinRM without winrm_password: the build waits for the guest to post its
// password (encrypted with the build's RSA key pair, as cloudbase-init
// does), decrypts it, uses it, and keeps it out of the log.
func TestStepGetPassword(t *testing.T) {
	l := newLab(t, nil)
	c := l.config(t, "communicator", "winrm", "winrm_username", "Administrator")
	state, ui := newState(t, c)
	const password = "Adm1n-Pa55-e3f9"
	runSteps(t, bg, state, &StepAuthenticate{}, &StepLoadFlavor{}, &StepSSHKey{}, &StepKeyPair{}, &StepSourceImage{}, &StepRunServer{},
		probe(func(state multistep.StateBag) {
			// The guest: find its key in the metadata service and post.
			srv := state.Get("server").(*servers.Server)
			ip, err := pickAddress(srv.Addresses, "", "4")
			if err != nil {
				t.Fatal(err)
			}
			md := l.c.MetadataFor(ip)
			if md == nil || len(md.PublicKeys) != 1 {
				t.Fatalf("metadata %+v", md)
			}
			var pubText string
			for _, k := range md.PublicKeys {
				pubText = k
			}
			pk, _, _, _, err := ssh.ParseAuthorizedKey([]byte(pubText))
			if err != nil {
				t.Fatal(err)
			}
			rsaPub := pk.(ssh.CryptoPublicKey).CryptoPublicKey().(*rsa.PublicKey)
			enc, err := rsa.EncryptPKCS1v15(rand.Reader, rsaPub, []byte(password)) //nolint:staticcheck // what cloudbase-init does: the guest this test plays
			if err != nil {
				t.Fatal(err)
			}
			// The guest posts while the build polls.
			go func() {
				if err := l.c.PostPassword(srv.ID, base64.StdEncoding.EncodeToString(enc)); err != nil {
					t.Error(err)
				}
			}()
		}),
		&StepGetPassword{}, haltStep{})
	if err := stateErr(state); err == nil || err.Error() != "stop here" {
		t.Fatalf("err %v\n%s", err, ui.errors())
	}
	if c.Comm.WinRMPassword != password {
		t.Errorf("winrm password %q", c.Comm.WinRMPassword)
	}
	for _, m := range append(ui.says, ui.errs...) {
		if strings.Contains(m, password) {
			t.Errorf("the password was printed: %q", m)
		}
	}
	l.assertEmpty(t)
}

// A server without a password posted: the wait is bounded by winrm_timeout.
func TestStepGetPasswordTimesOut(t *testing.T) {
	l := newLab(t, nil)
	c := l.config(t, "communicator", "winrm", "winrm_username", "Administrator", "winrm_timeout", "1s")
	state, _ := newState(t, c)
	runSteps(t, bg, state, &StepAuthenticate{}, &StepLoadFlavor{}, &StepSSHKey{}, &StepKeyPair{}, &StepSourceImage{}, &StepRunServer{}, &StepGetPassword{})
	if err := stateErr(state); err == nil || !strings.HasPrefix(err.Error(), "timed out after 1s waiting for server ") {
		t.Errorf("err %v", err)
	}
	l.assertEmpty(t)
}

// The lab's os-server-password refuses a second password, as Nova does.
func TestLabServerPasswordOnce(t *testing.T) {
	l := newLab(t, nil)
	c := l.config(t)
	state, _ := newState(t, c)
	runSteps(t, bg, state, &StepAuthenticate{}, &StepLoadFlavor{}, &StepSourceImage{}, &StepRunServer{}, probe(func(state multistep.StateBag) {
		id := state.Get("server_id").(string)
		if err := l.c.PostPassword(id, "a"); err != nil {
			t.Fatal(err)
		}
		if err := l.c.PostPassword(id, "b"); err == nil || !strings.Contains(err.Error(), "409") {
			t.Errorf("second password: %v", err)
		}
		cl := state.Get("clients").(*clients)
		if p, err := servers.GetPassword(bg, cl.compute, id).ExtractPassword(nil); err != nil || p != "a" {
			t.Errorf("password %q %v", p, err)
		}
	}), haltStep{})
}

// The SSH address as the official builder chooses it: AccessIPv4 after
// the floating IP; an IPv6 address bare, which the SDK brackets.
func TestServerAddress(t *testing.T) {
	srv := &servers.Server{AccessIPv4: "203.0.113.7", Addresses: map[string]any{
		"lab-net": []any{map[string]any{"addr": "10.0.0.5", "version": 4.0, "OS-EXT-IPS:type": "fixed"},
			map[string]any{"addr": "fd00::5", "version": 6.0, "OS-EXT-IPS:type": "fixed"}},
	}}
	for _, tc := range []struct{ iface, ver, want string }{
		{"", "", "203.0.113.7"},
		{"", "4", "203.0.113.7"},
		{"", "6", "fd00::5"},
		{"lab-net", "", "10.0.0.5"},
	} {
		got, err := serverAddress(srv, tc.iface, tc.ver)
		if err != nil || got != tc.want {
			t.Errorf("serverAddress(%q, %q) = %q, %v; want %q", tc.iface, tc.ver, got, err, tc.want)
		}
	}
	// What the SDK's StepConnect dials (net.JoinHostPort) must parse back.
	if h, _, err := net.SplitHostPort(net.JoinHostPort("fd00::5", "22")); err != nil || h != "fd00::5" {
		t.Errorf("bare IPv6: %q %v", h, err)
	}
	if _, _, err := net.SplitHostPort(net.JoinHostPort("[fd00::5]", "22")); err == nil {
		t.Error("a bracketed address would have worked: the docs table says otherwise")
	}
}

// -debug: every request is printed, and no credential or token is.
func TestDebugTransportRedacts(t *testing.T) {
	l := newLab(t, nil)
	c := l.config(t, "password", "lab-password")
	c.PackerDebug = true
	state, ui := newState(t, c)
	runSteps(t, bg, state, &StepAuthenticate{}, &StepLoadFlavor{})
	if err := stateErr(state); err != nil {
		t.Fatal(err)
	}
	var reqs int
	for _, m := range ui.says {
		if strings.HasPrefix(m, "[DEBUG] Request ") {
			reqs++
		}
		if strings.Contains(m, "lab-password") {
			t.Errorf("password printed: %q", m)
		}
	}
	if reqs < 2 {
		t.Errorf("%d requests printed, want the token and flavor requests:\n%s", reqs, strings.Join(ui.says, "\n"))
	}
	// An error body echoing credentials is redacted too.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":{"message":"bad","auth":{"password":"pw-echo","token":{"id":"tok-echo"}},"application_credential_secret":"app-echo"}}`))
	}))
	defer srv.Close()
	ui2 := newTestUI(t)
	d := &debugTransport{ui: ui2, base: http.DefaultTransport, secrets: []string{"given-secret"}}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v3/x?token=abc&name=given-secret", nil)
	resp, err := d.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	out := strings.Join(ui2.says, "\n")
	for _, s := range []string{"pw-echo", "tok-echo", "app-echo", "abc", "given-secret"} {
		if strings.Contains(out, s) {
			t.Errorf("%s printed:\n%s", s, out)
		}
	}
	if !strings.Contains(out, "[DEBUG] Request GET "+srv.URL+"/v3/x?") || !strings.Contains(out, " 401 ") || !strings.Contains(out, `"message":"bad"`) {
		t.Errorf("debug output:\n%s", out)
	}
}

// The sweep cannot see what it cannot list: it says so, naming the kind.
func TestStepSweepReportsListErrors(t *testing.T) {
	l := newLab(t, nil)
	c := l.config(t, "use_blockstorage_volume", true, "communicator", "ssh", "ssh_username", "rocky")
	state, ui := newState(t, c)
	runSteps(t, bg, state, &StepAuthenticate{}, &StepSweep{}, probe(func(state multistep.StateBag) {
		// Every later request fails as a broken endpoint would.
		cl := state.Get("clients").(*clients)
		for _, sc := range []*string{&cl.compute.Endpoint, &cl.network.Endpoint, &cl.volume.Endpoint, &cl.image.Endpoint} {
			*sc = "http://127.0.0.1:9/"
		}
		cl.compute.ResourceBase, cl.network.ResourceBase, cl.volume.ResourceBase, cl.image.ResourceBase = "", "", "", ""
	}), haltStep{})
	errs := ui.errors()
	for _, kind := range []string{"servers", "floating IPs", "volumes", "images", "keypairs"} {
		if !strings.Contains(errs, "Warning: could not list "+kind+" to sweep leftovers of build "+c.buildID) {
			t.Errorf("no warning about %s:\n%s", kind, errs)
		}
	}
}
