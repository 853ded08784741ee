package openstack

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/hashicorp/packer-plugin-sdk/multistep"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/cloud"
)

// lostAnswerCases are the cloud calls of a build whose answer a gateway
// may lose after the cloud acted: every create, and the actions and
// updates the build replays. adopt: the build must say it adopted what
// the lost call made (a create); the others are replayed by the transport
// and must pass although their change is already there.
var lostAnswerCases = []struct {
	name          string
	svc, method   string
	path, body    string
	adopt, volume bool
	opts          []any
}{
	{name: "server", svc: cloud.SvcCompute, method: "POST", path: "/servers$", adopt: true},
	{name: "server on a boot volume", svc: cloud.SvcCompute, method: "POST", path: "/servers$", adopt: true, volume: true},
	{name: "boot volume", svc: cloud.SvcVolume, method: "POST", path: "/volumes$", adopt: true, volume: true},
	{name: "floating IP", svc: cloud.SvcNetwork, method: "POST", path: "/floatingips$", adopt: true, opts: []any{"floating_ip_network", "public"}},
	{name: "server stop", svc: cloud.SvcCompute, method: "POST", path: "/action$", body: "os-stop"},
	{name: "snapshot", svc: cloud.SvcCompute, method: "POST", path: "/action$", body: "createImage", adopt: true},
	{name: "server delete before upload", svc: cloud.SvcCompute, method: "DELETE", path: "/servers/", volume: true},
	{name: "volume image metadata", svc: cloud.SvcVolume, method: "POST", path: "/action$", body: "os-set_image_metadata", volume: true},
	{name: "volume upload", svc: cloud.SvcVolume, method: "POST", path: "/action$", body: "os-volume_upload_image", adopt: true, volume: true},
	{name: "image metadata", svc: cloud.SvcImage, method: "PATCH", path: "/v2/images/"},
	{name: "image member", svc: cloud.SvcImage, method: "POST", path: "/members$",
		opts: []any{"image_visibility", "shared", "image_members", []string{"2f6e2a7c6c1b4e0f9d0e6a1b2c3d4e5f"}}},
	{name: "source image create", svc: cloud.SvcImage, method: "POST", path: "/v2/images$", adopt: true, opts: []any{"import"}},
	{name: "source image import", svc: cloud.SvcImage, method: "POST", path: "/import$", adopt: true, opts: []any{"import"}},
}

// Every call above, its answer lost after the cloud acted (a gateway's 502
// or a dropped connection): the build succeeds, having adopted what the
// lost call made, and leaves nothing but its image.
func TestBuildLostAnswers(t *testing.T) {
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("QFI\xfbdisk-bytes")) }))
	defer src.Close()
	for _, tc := range lostAnswerCases {
		for _, status := range []int{http.StatusBadGateway, 0} {
			t.Run(fmt.Sprintf("%s/%d", tc.name, status), func(t *testing.T) {
				l := newLab(t, nil)
				l.c.SetFaults(cloud.LoseAnswer(tc.svc, tc.method, tc.path, tc.body, status))
				opts := tc.opts
				if len(opts) == 1 && opts[0] == "import" {
					opts = []any{"source_image", nil, "external_source_image_url", src.URL + "/rocky.qcow2"}
				}
				if tc.volume {
					opts = append(opts, "use_blockstorage_volume", true, "volume_size", 5)
				}
				b, art, ui, err := build(t, context.Background(), l, nil, opts...)
				if err != nil {
					t.Fatalf("build: %v\n%s", err, ui.errors())
				}
				if hits := l.c.FaultHits(); hits[0] != 1 {
					t.Fatalf("the fault did not fire: %v", hits)
				}
				adopted := strings.Contains(strings.Join(ui.says, "\n"), "was lost; adopting what it made")
				if adopted != tc.adopt {
					t.Errorf("adopted %v, want %v:\n%s", adopted, tc.adopt, strings.Join(ui.says, "\n"))
				}
				l.assertOnlyImage(t, b, art.Id())
			})
		}
	}
}

// assertOnlyImage fails when anything of the build is left but its image.
func (l *lab) assertOnlyImage(t *testing.T, b *Builder, keep string) {
	t.Helper()
	l.assertEmpty(t)
	cl, err := newClients(context.Background(), &b.config.AccessConfig, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	all, err := buildImages(context.Background(), cl, b.config.buildID, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, img := range all {
		if img.ID != keep {
			t.Errorf("leftover image %s (%s, %s)", img.ID, img.Name, img.Status)
		}
	}
	if len(all) == 0 && keep != "" {
		t.Errorf("the image %s lacks %s", keep, BuildIDKey)
	}
	// Also those without the build id: the lab holds only the base image.
	pages, err := images.List(cl.image, images.ListOpts{}).AllPages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	every, _ := images.ExtractImages(pages)
	for _, img := range every {
		if img.ID != keep && img.ID != l.imageID {
			t.Errorf("leftover image %s (%s, %s, properties %v)", img.ID, img.Name, img.Status, img.Properties)
		}
	}
}

// A create the cloud keeps failing with gateway errors, without acting:
// after a bounded number of tries the build fails naming the cause, and
// leaves nothing.
func TestBuildGatewayErrorsOnCreateFailClearly(t *testing.T) {
	l := newLab(t, nil)
	l.c.SetFaults(cloud.Fault{Service: cloud.SvcCompute, Method: "POST", Path: "/servers$", Status: http.StatusBadGateway})
	b, _, ui, err := build(t, context.Background(), l, nil)
	want := fmt.Sprintf("creating server %s: the answer was lost %d times", b.config.InstanceName, createAttempts)
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "502") {
		t.Fatalf("err = %v, want %q\n%s", err, want, ui.errors())
	}
	if hits := l.c.FaultHits(); hits[0] != createAttempts {
		t.Errorf("%d creates, want %d", hits[0], createAttempts)
	}
	l.assertOnlyImage(t, b, "")
}

// The keypair: a lost answer is adopted (same name, same key); a keypair
// of that name with another key is someone else's, and the build fails
// naming it.
func TestStepKeyPairLostAnswer(t *testing.T) {
	for _, status := range []int{http.StatusBadGateway, 0} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			l := newLab(t, nil)
			c := l.config(t, "communicator", "ssh", "ssh_username", "rocky")
			l.c.SetFaults(cloud.LoseAnswer(cloud.SvcCompute, "POST", "/os-keypairs$", "", status))
			state, ui := newState(t, c)
			var name string
			runSteps(t, bg, state, &StepAuthenticate{}, &StepSweep{}, &StepSSHKey{}, &StepKeyPair{},
				probe(func(state multistep.StateBag) { name = getString(state, "keypair_name") }), haltStep{})
			if name != c.Comm.SSHTemporaryKeyPairName || !strings.Contains(strings.Join(ui.says, "\n"), "adopting") {
				t.Fatalf("keypair %q, errors %s", name, ui.errors())
			}
			l.assertEmpty(t)
		})
	}
	t.Run("someone else's", func(t *testing.T) {
		l := newLab(t, nil)
		c := l.config(t, "communicator", "ssh", "ssh_username", "rocky", "temporary_key_pair_name", "taken")
		state, _ := newState(t, c)
		cl, err := newClients(bg, &c.AccessConfig, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := keypairs.Create(bg, cl.compute, keypairs.CreateOpts{Name: "taken"}).Extract(); err != nil {
			t.Fatal(err)
		}
		l.c.SetFaults(cloud.LoseAnswer(cloud.SvcCompute, "POST", "/os-keypairs$", "", 0))
		runSteps(t, bg, state, &StepAuthenticate{}, &StepSSHKey{}, &StepKeyPair{}, haltStep{})
		if err := stateErr(state); err == nil || !strings.Contains(err.Error(), "creating keypair taken") {
			t.Fatalf("err = %v", err)
		}
	})
}

// Waits pass up to maxTransient tolerable errors in a row (a 5xx, a
// dropped connection, a 404 before the resource was seen), as the
// official builder does, and no more; a 404 after it was seen, or a 4xx,
// ends the wait at once.
func TestWaitForToleratesTransientErrors(t *testing.T) {
	e500 := gophercloud.ErrUnexpectedResponseCode{Actual: 500}
	e400 := gophercloud.ErrUnexpectedResponseCode{Actual: 400}
	seq := func(errs ...error) func(context.Context) (string, bool, error) {
		i := 0
		return func(context.Context) (string, bool, error) {
			i++
			if i > len(errs) {
				return "ACTIVE", true, nil
			}
			if errs[i-1] == nil {
				return "BUILD", false, nil
			}
			return "", false, errs[i-1]
		}
	}
	many := func(err error, n int) []error {
		out := make([]error, n)
		for i := range out {
			out[i] = err
		}
		return out
	}
	early := gone("server x disappeared")
	for _, tc := range []struct {
		name string
		errs []error
		want string // "" = success
	}{
		{"10 server errors pass", many(e500, maxTransient), ""},
		{"a dropped connection passes", []error{io.ErrUnexpectedEOF}, ""},
		{"an early 404 passes", many(early, 3), ""},
		{"the bound holds", many(e500, maxTransient+1), "after 10 transient errors"},
		{"a 404 once seen is final", []error{nil, early}, "server x disappeared"},
		{"a 400 is final", []error{e400}, "waiting for server x"},
		{"the count restarts after a good answer", append(append(many(e500, maxTransient), nil), many(e500, maxTransient)...), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := waitFor(bg, "server x to become ACTIVE", time.Minute, seq(tc.errs...))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// The sweep finds images by fatimage_build_id whatever their name, as
// `openstack image list --property fatimage_build_id=...` does.
func TestStepSweepFindsImagesByBuildID(t *testing.T) {
	l := newLab(t, nil)
	c := l.config(t)
	state, _ := newState(t, c)
	var made string
	runSteps(t, bg, state, &StepAuthenticate{}, &StepSweep{}, probe(func(state multistep.StateBag) {
		cl := state.Get("clients").(*clients)
		img, err := images.Create(bg, cl.image, images.CreateOpts{Name: "renamed-by-someone", Properties: map[string]string{BuildIDKey: c.buildID}}).Extract()
		if err != nil {
			t.Fatal(err)
		}
		made = img.ID
	}), haltStep{})
	l.assertOnlyImage(t, &Builder{config: *c}, "")
	if made == "" {
		t.Fatal("no image made")
	}
}

// A server of this build that no step recorded (a create whose answer was
// lost and not found) holding the boot volume: the volume's cleanup
// deletes it first instead of waiting state_timeout for the volume to be
// detached.
func TestStepCreateVolumeCleanupFreesItFromAnUnrecordedServer(t *testing.T) {
	l := newLab(t, nil)
	c := l.config(t, "use_blockstorage_volume", true, "volume_size", 2, "state_timeout", "20s")
	state, ui := newState(t, c)
	start := time.Now()
	runSteps(t, bg, state, &StepAuthenticate{}, &StepLoadFlavor{}, &StepSourceImage{}, &StepDiscoverNetwork{}, &StepCreateVolume{},
		probe(func(state multistep.StateBag) {
			cl := state.Get("clients").(*clients)
			srv, err := servers.Create(bg, cl.compute, servers.CreateOpts{Name: c.InstanceName, FlavorRef: "f1",
				Metadata: map[string]string{BuildIDKey: c.buildID},
				BlockDevice: []servers.BlockDevice{{SourceType: servers.SourceVolume, DestinationType: servers.DestinationVolume,
					UUID: getString(state, "volume_id")}}}, nil).Extract()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := waitServer(bg, cl, srv.ID, "ACTIVE", time.Minute); err != nil {
				t.Fatal(err)
			}
		}), haltStep{})
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("cleanup took %s: it waited for the volume instead of freeing it", took)
	}
	if ui.errors() != "" {
		t.Errorf("errors: %s", ui.errors())
	}
	l.assertEmpty(t)
}
