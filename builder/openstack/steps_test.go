package openstack

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/hashicorp/packer-plugin-sdk/multistep"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/cloud"
)

var bg = context.Background()

// haltStep stops a run after the steps under test, so their Cleanup runs
// as after a failure.
type haltStep struct{}

func (haltStep) Run(_ context.Context, state multistep.StateBag) multistep.StepAction {
	state.Put("error", errors.New("stop here"))
	return multistep.ActionHalt
}
func (haltStep) Cleanup(multistep.StateBag) {}

// probe runs f between Run and Cleanup of the steps before it.
type probe func(state multistep.StateBag)

func (p probe) Run(_ context.Context, state multistep.StateBag) multistep.StepAction {
	p(state)
	return multistep.ActionContinue
}
func (probe) Cleanup(multistep.StateBag) {}

func TestWaitFor(t *testing.T) {
	t.Run("terminal state fails at once with its message", func(t *testing.T) {
		start := time.Now()
		calls := 0
		err := waitFor(bg, "server x to become ACTIVE", time.Minute, func(context.Context) (string, bool, error) {
			calls++
			if calls < 3 {
				return "BUILD", false, nil
			}
			return "ERROR", false, terminal("server x went to ERROR: No valid host")
		})
		if err == nil || err.Error() != "waiting for server x to become ACTIVE: server x went to ERROR: No valid host" || !isTerminal(err) {
			t.Errorf("err = %v", err)
		}
		if time.Since(start) > time.Second {
			t.Errorf("took %s", time.Since(start))
		}
	})
	t.Run("timeout names the last status and the option", func(t *testing.T) {
		err := waitFor(bg, "volume v to become available", 80*time.Millisecond, func(context.Context) (string, bool, error) {
			return "creating", false, nil
		})
		want := "timed out after 80ms waiting for volume v to become available (last status creating); raise state_timeout if the cloud is slow"
		if err == nil || err.Error() != want {
			t.Errorf("err = %v\nwant %s", err, want)
		}
	})
	t.Run("cancel stops the wait promptly", func(t *testing.T) {
		ctx, cancel := context.WithCancel(bg)
		time.AfterFunc(50*time.Millisecond, cancel)
		start := time.Now()
		old := pollMax
		pollMax = 10 * time.Second // a sleeping poll must still wake up
		defer func() { pollMax = old }()
		err := waitFor(ctx, "image i to become active", time.Hour, func(context.Context) (string, bool, error) {
			return "saving", false, nil
		})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("cancel took %s", d)
		}
	})
	t.Run("polling backs off", func(t *testing.T) {
		var at []time.Time
		err := waitFor(bg, "x", 600*time.Millisecond, func(context.Context) (string, bool, error) {
			at = append(at, time.Now())
			return "", false, nil
		})
		if err == nil {
			t.Fatal("a wait that never ends did not time out")
		}
		if len(at) < 4 {
			t.Fatalf("only %d polls", len(at))
		}
		first, last := at[1].Sub(at[0]), at[len(at)-1].Sub(at[len(at)-2])
		if first > 50*time.Millisecond || last < first {
			t.Errorf("intervals first %s last %s: want fast start and back-off", first, last)
		}
	})
}

// The early steps: each Run creates, each Cleanup deletes, also after a
// later step fails, and running Cleanup twice is harmless.
func TestStepsToServerAndCleanupAfterFailure(t *testing.T) {
	l := newLab(t, nil)
	c := l.config(t, "communicator", "ssh", "ssh_username", "rocky", "user_data", "#cloud-config\n",
		"instance_metadata", map[string]string{"role": "build"}, "network_discovery_cidrs", []string{"10.213.0.0/16"})
	state, _ := newState(t, c)
	keyStep, serverStep := &StepKeyPair{}, &StepRunServer{}
	var seen *cloud.Metadata
	runSteps(t, bg, state,
		&StepAuthenticate{}, &StepLoadFlavor{}, &StepSSHKey{}, keyStep, &StepSourceImage{}, &StepDiscoverNetwork{},
		&StepCreateVolume{}, serverStep,
		probe(func(state multistep.StateBag) {
			srv := state.Get("server").(*servers.Server)
			ip, err := pickAddress(srv.Addresses, "", "4")
			if err != nil {
				t.Error(err)
				return
			}
			seen = l.c.MetadataFor(ip)
			if st := l.c.Status(); len(st.Servers) != 1 || len(st.Keypairs) != 1 {
				t.Errorf("mid-build status %+v", st)
			}
		}),
		haltStep{})
	if seen == nil {
		t.Fatal("no metadata for the server")
	}
	if seen.Meta["ansible_init_disable"] != "true" || seen.Meta["role"] != "build" || seen.Meta[BuildIDKey] != c.buildID {
		t.Errorf("server metadata %v", seen.Meta)
	}
	pub := strings.TrimSpace(string(c.Comm.SSHPublicKey))
	if got := strings.TrimSpace(seen.PublicKeys[c.Comm.SSHTemporaryKeyPairName]); got != pub || !strings.HasPrefix(pub, "ssh-ed25519 ") || !strings.HasSuffix(pub, " "+c.Comm.SSHTemporaryKeyPairName) {
		t.Errorf("injected key %q, want %q (ed25519, commented with the key pair name)", got, pub)
	}
	if string(seen.UserData) != "#cloud-config\n" {
		t.Errorf("user data %q", seen.UserData)
	}
	l.assertEmpty(t)
	// Again: nothing to do, nothing fails.
	keyStep.Cleanup(state)
	serverStep.Cleanup(state)
}

func TestStepLoadFlavor(t *testing.T) {
	l := newLab(t, nil)
	for ref, want := range map[string]string{"f1": "", "m1.small": "", "m1.huge": `flavor: no flavor has ID or name "m1.huge"`} {
		c := l.config(t, "flavor", ref)
		state, _ := newState(t, c)
		runSteps(t, bg, state, &StepAuthenticate{}, &StepLoadFlavor{})
		err := stateErr(state)
		switch {
		case want == "" && (err != nil || state.Get("flavor_id") != "f1"):
			t.Errorf("%s: flavor %v err %v", ref, state.Get("flavor_id"), err)
		case want != "" && (err == nil || err.Error() != want):
			t.Errorf("%s: err %v, want %s", ref, err, want)
		}
	}
}

func TestStepSourceImage(t *testing.T) {
	l := newLab(t, nil)
	// created_at has one-second resolution: the older one is a minute old
	older, _ := l.c.AddImage(cloud.ImageSeed{Name: "rocky-fat", Tags: []string{"fat"}, Properties: map[string]string{"os_version": "9"}, CreatedAt: time.Now().Add(-time.Minute)})
	newer, _ := l.c.AddImage(cloud.ImageSeed{Name: "rocky-fat", Tags: []string{"fat"}, Properties: map[string]string{"os_version": "9"}})
	if _, err := l.c.AddImage(cloud.ImageSeed{Name: "rocky-fat", Tags: []string{"fat"}, Properties: map[string]string{"os_version": "8"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.c.AddImage(cloud.ImageSeed{Name: "Rocky [test]", CreatedAt: time.Now().Add(-time.Minute)}); err != nil {
		t.Fatal(err)
	}
	twiceNewer, _ := l.c.AddImage(cloud.ImageSeed{Name: "Rocky [test]"})
	filter := func(mostRecent bool, props map[string]string) map[string]any {
		return map[string]any{"filters": map[string]any{"name": "rocky-fat", "tags": []string{"fat"}, "properties": props}, "most_recent": mostRecent}
	}
	cases := []struct {
		name    string
		kv      []any
		want    string
		wantErr string
	}{
		{"by id", nil, l.imageID, ""},
		{"by name", []any{"source_image", nil, "source_image_name", "Rocky-9-GenericCloud"}, l.imageID, ""},
		{"missing id", []any{"source_image", "0b9a6f0e-0000-4000-8000-000000000000"}, "", `source_image: no image has ID "0b9a6f0e-0000-4000-8000-000000000000" (use source_image_name for a name)`},
		{"name most recent", []any{"source_image", nil, "source_image_name", "Rocky [test]", "source_image_filter", map[string]any{"most_recent": true}}, twiceNewer, ""},
		{"name ambiguous", []any{"source_image", nil, "source_image_name", "Rocky [test]"}, "", `source_image_name: 2 active images match name pattern=Rocky \[test]`},
		{"name is not a pattern", []any{"source_image", nil, "source_image_name", "Rocky*"}, "", `source_image_name: no active image matches name pattern=Rocky\*`},
		{"filter name is a pattern", []any{"source_image", nil, "source_image_filter", map[string]any{"filters": map[string]any{"name": "Rocky \\[t*"}, "most_recent": true}}, twiceNewer, ""},
		{"filter most recent", []any{"source_image", nil, "source_image_filter", filter(true, map[string]string{"os_version": "9"})}, newer, ""},
		{"filter ambiguous", []any{"source_image", nil, "source_image_filter", filter(false, map[string]string{"os_version": "9"})}, "",
			"source_image_filter: 2 active images match name=rocky-fat, tags=[fat], properties=map[os_version:9]; give source_image (an ID), narrow the filter, or set source_image_filter.most_recent = true"},
		{"filter none", []any{"source_image", nil, "source_image_filter", filter(true, map[string]string{"os_version": "7"})}, "",
			"source_image_filter: no active image matches name=rocky-fat, tags=[fat], properties=map[os_version:7]"},
	}
	_ = older
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := l.config(t, tc.kv...)
			state, _ := newState(t, c)
			runSteps(t, bg, state, &StepAuthenticate{}, &StepSourceImage{})
			err := stateErr(state)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Errorf("err %v, want %s", err, tc.wantErr)
				}
				return
			}
			if err != nil || state.Get("source_image_id") != tc.want {
				t.Errorf("image %v err %v, want %s", state.Get("source_image_id"), err, tc.want)
			}
		})
	}
}

func TestStepSourceImageImportsAndDeletes(t *testing.T) {
	l := newLab(t, nil)
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("QFI\xfbdisk-bytes")) }))
	defer src.Close()
	c := l.config(t, "source_image", nil, "external_source_image_url", src.URL+"/rocky.qcow2",
		"external_source_image_properties", map[string]string{"os_distro": "rocky"})
	state, ui := newState(t, c)
	var imported string
	runSteps(t, bg, state, &StepAuthenticate{}, &StepSourceImage{}, probe(func(state multistep.StateBag) {
		imported, _ = state.Get("source_image_id").(string)
	}), haltStep{})
	if imported == "" {
		t.Fatalf("nothing imported: %s", ui.errors())
	}
	cl, _ := newClients(bg, &c.AccessConfig, false, nil)
	if _, err := images.Get(bg, cl.image, imported).Extract(); !isNotFound(err) {
		t.Errorf("imported image after cleanup: %v", err)
	}
}

func TestStepCreateVolumeErrorIsCleanedUp(t *testing.T) {
	l := newLab(t, nil)
	l.c.SetFaults(cloud.Fault{Kind: cloud.FaultVolumeError})
	c := l.config(t, "use_blockstorage_volume", true)
	state, _ := newState(t, c)
	runSteps(t, bg, state, &StepAuthenticate{}, &StepLoadFlavor{}, &StepSourceImage{}, &StepCreateVolume{})
	err := stateErr(state)
	if err == nil || !strings.Contains(err.Error(), "is in status error") {
		t.Errorf("err %v", err)
	}
	l.assertEmpty(t)
}

func TestStepCreateVolumeTimeout(t *testing.T) {
	l := newLab(t, nil)
	l.c.SetFaults(cloud.Fault{Kind: cloud.FaultVolumeStuck})
	c := l.config(t, "use_blockstorage_volume", true, "state_timeout", "300ms")
	state, _ := newState(t, c)
	runSteps(t, bg, state, &StepAuthenticate{}, &StepLoadFlavor{}, &StepSourceImage{}, &StepCreateVolume{})
	err := stateErr(state)
	if err == nil || !strings.Contains(err.Error(), "timed out after 300ms waiting for volume") || !strings.Contains(err.Error(), "last status creating") {
		t.Errorf("err %v", err)
	}
}

func TestStepFloatingIPExistingByAddress(t *testing.T) {
	l := newLab(t, nil)
	c := l.config(t)
	// Allocate a floating IP the project already owns.
	state, _ := newState(t, c)
	runSteps(t, bg, state, &StepAuthenticate{})
	cl := state.Get("clients").(*clients)
	pub, err := findNetwork(bg, cl, "test", "public")
	if err != nil {
		t.Fatal(err)
	}
	fip, err := floatingips.Create(bg, cl.network, floatingips.CreateOpts{FloatingNetworkID: pub}).Extract()
	if err != nil {
		t.Fatal(err)
	}

	for _, kv := range [][]any{{"floating_ip", fip.FloatingIP}, {"floating_ip", fip.ID}, {"floating_ip_network", "public", "reuse_ips", true}} {
		c := l.config(t, kv...)
		state, ui := newState(t, c)
		var attached string
		runSteps(t, bg, state, &StepAuthenticate{}, &StepLoadFlavor{}, &StepSourceImage{}, &StepRunServer{}, &StepFloatingIP{},
			probe(func(state multistep.StateBag) {
				attached = getString(state, "floating_ip")
				host, err := commHost(c)(state)
				if err != nil || host != fip.FloatingIP {
					t.Errorf("%v: host %q err %v", kv, host, err)
				}
			}), haltStep{})
		if attached != fip.FloatingIP {
			t.Errorf("%v: attached %q, want %s\n%s", kv, attached, fip.FloatingIP, ui.errors())
		}
		got, err := floatingips.Get(bg, cl.network, fip.ID).Extract()
		if err != nil || got.PortID != "" {
			t.Errorf("%v: a borrowed floating IP must stay, detached: %+v %v", kv, got, err)
		}
	}
	floatingips.Delete(bg, cl.network, fip.ID)
	l.assertEmpty(t)
}

func TestStepKeyPairUsesExisting(t *testing.T) {
	l := newLab(t, nil)
	c := l.config(t, "communicator", "ssh", "ssh_username", "rocky", "ssh_keypair_name", "mine", "ssh_agent_auth", true)
	state, _ := newState(t, c)
	runSteps(t, bg, state, &StepAuthenticate{}, &StepSSHKey{}, &StepKeyPair{}, haltStep{})
	if state.Get("keypair_name") != "mine" {
		t.Errorf("keypair_name %v", state.Get("keypair_name"))
	}
	cl := state.Get("clients").(*clients)
	if _, err := keypairs.Get(bg, cl.compute, c.Comm.SSHTemporaryKeyPairName, nil).Extract(); !isNotFound(err) {
		t.Errorf("a temporary keypair was made: %v", err)
	}
}

func TestStepStopAndSnapshotWaitsBeforeServerDelete(t *testing.T) {
	l := newLab(t, func(o *cloud.Options) { o.Timing.ImageSave = 500 * time.Millisecond })
	c := l.config(t)
	state, ui := newState(t, c)
	runSteps(t, bg, state, &StepAuthenticate{}, &StepLoadFlavor{}, &StepSourceImage{}, &StepRunServer{},
		&StepStopServer{}, &StepCreateImage{},
		probe(func(state multistep.StateBag) {
			cl := state.Get("clients").(*clients)
			img, err := images.Get(bg, cl.image, getString(state, "image_id")).Extract()
			if err != nil || img.Status != images.ImageStatusActive {
				t.Errorf("image %+v %v", img, err)
			}
			if l.hv.machines() != 1 {
				t.Error("the server was deleted before the image was active")
			}
		}))
	if err := stateErr(state); err != nil {
		t.Fatalf("%v\n%s", err, ui.errors())
	}
	if l.hv.machines() != 0 {
		t.Error("server left")
	}
}

func TestPickAddress(t *testing.T) {
	addrs := map[string]any{
		"lab-net": []any{
			map[string]any{"addr": "fd00::5", "version": 6.0, "OS-EXT-IPS:type": "fixed"},
			map[string]any{"addr": "10.0.0.5", "version": 4.0, "OS-EXT-IPS:type": "fixed"},
			map[string]any{"addr": "172.24.4.9", "version": 4.0, "OS-EXT-IPS:type": "floating"},
		},
		"storage": []any{map[string]any{"addr": "192.168.9.9", "version": 4.0, "OS-EXT-IPS:type": "fixed"}},
	}
	for _, tc := range []struct{ iface, ver, want string }{
		{"", "", "172.24.4.9"},
		{"", "6", "fd00::5"},
		{"storage", "", "192.168.9.9"},
		{"storage", "6", ""},
	} {
		got, err := pickAddress(addrs, tc.iface, tc.ver)
		if got != tc.want || (tc.want == "" && err == nil) {
			t.Errorf("pickAddress(%q, %q) = %q, %v; want %q", tc.iface, tc.ver, got, err, tc.want)
		}
	}
}

func TestStepAuthenticate(t *testing.T) {
	l := newLab(t, func(o *cloud.Options) {
		o.Users = []cloud.User{{Name: "lab", Password: "lab-password", Project: "lab", Domain: "Default",
			AppCredentials: []cloud.AppCredential{{ID: "ac-1", Name: "ci", Secret: "s3cret"}}}}
	})
	for _, tc := range []struct {
		name    string
		kv      []any
		wantErr string
	}{
		{"password", nil, ""},
		{"application credential id", []any{"username", nil, "password", nil, "application_credential_id", "ac-1", "application_credential_secret", "s3cret"}, ""},
		{"application credential name", []any{"password", nil, "application_credential_name", "ci", "application_credential_secret", "s3cret"}, ""},
		{"wrong password", []any{"password", "nope"}, "authenticating to " + l.c.AuthURL() + ": "},
		{"wrong region", []any{"region", "Mars"}, `finding the compute (Nova) endpoint in region "Mars", interface public: `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := l.config(t, tc.kv...)
			state, _ := newState(t, c)
			runSteps(t, bg, state, &StepAuthenticate{}, &StepLoadFlavor{})
			err := stateErr(state)
			if tc.wantErr == "" && err != nil {
				t.Errorf("err %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)) {
				t.Errorf("err %v, want prefix %q", err, tc.wantErr)
			}
		})
	}
}

// Resources the steps never recorded (a create retried after a lost
// answer) are found by the build id and deleted; the artifact stays.
func TestStepSweepDeletesUnrecorded(t *testing.T) {
	for _, fail := range []bool{false, true} {
		l := newLab(t, nil)
		c := l.config(t, "use_blockstorage_volume", true, "communicator", "ssh", "ssh_username", "rocky")
		state, ui := newState(t, c)
		var artifact string
		steps := []multistep.Step{&StepAuthenticate{}, &StepSweep{}, probe(func(state multistep.StateBag) {
			cl := state.Get("clients").(*clients)
			meta := map[string]string{BuildIDKey: c.buildID}
			if _, err := servers.Create(bg, cl.compute, servers.CreateOpts{Name: c.InstanceName, FlavorRef: "f1", ImageRef: l.imageID, Metadata: meta}, nil).Extract(); err != nil {
				t.Error(err)
			}
			if _, err := volumes.Create(bg, cl.volume, volumes.CreateOpts{Size: 1, Name: c.VolumeName, Metadata: meta}, nil).Extract(); err != nil {
				t.Error(err)
			}
			pub, _ := findNetwork(bg, cl, "test", "public")
			if _, err := floatingips.Create(bg, cl.network, floatingips.CreateOpts{FloatingNetworkID: pub, Description: fipDescription(c)}).Extract(); err != nil {
				t.Error(err)
			}
			if _, err := keypairs.Create(bg, cl.compute, keypairs.CreateOpts{Name: c.Comm.SSHTemporaryKeyPairName}).Extract(); err != nil {
				t.Error(err)
			}
			for i := 0; i < 2; i++ {
				img, err := images.Create(bg, cl.image, images.CreateOpts{Name: c.ImageName, Properties: map[string]string{BuildIDKey: c.buildID}}).Extract()
				if err != nil {
					t.Fatal(err)
				}
				artifact = img.ID
			}
			state.Put("image_id", artifact)
		})}
		if fail {
			steps = append(steps, haltStep{})
		}
		runSteps(t, bg, state, steps...)
		cl := state.Get("clients").(*clients)
		_, err := images.Get(bg, cl.image, artifact).Extract()
		if fail != isNotFound(err) {
			t.Errorf("failed=%v: artifact image lookup: %v", fail, err)
		}
		if !fail {
			if err := deleteImage(bg, cl, artifact, time.Minute); err != nil {
				t.Error(err)
			}
		}
		l.assertEmpty(t)
		if ui.errors() != "" && !fail {
			t.Errorf("errors: %s", ui.errors())
		}
	}
}
