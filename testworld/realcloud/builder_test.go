//go:build realcloud

package realcloud

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/imagedata"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/members"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/realcloud/guests"
)

// baseChecksum is the MD5 Glance records for the tier's base image: a
// snapshot of a server booted from it holds the same bytes (the tier's
// Nova driver uploads the server's disk).
func baseChecksum() string {
	sum := md5.Sum(BaseImage())
	return hex.EncodeToString(sum[:])
}

// serverShow is a shell-local step that records the build server as Nova
// shows it (the real openstack CLI, run while the server exists).
func serverShow(name, out string) string {
	return fmt.Sprintf(`
  provisioner "shell-local" {
    inline = ["/usr/bin/openstack server show %s -f json > %s"]
  }
`, name, out)
}

type shownServer struct {
	Status     string            `json:"status"`
	Properties map[string]string `json:"properties"`
	Addresses  map[string]any    `json:"addresses"`
}

func readShown(t *testing.T, path string) shownServer {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the shell-local step wrote nothing: %v", err)
	}
	var s shownServer
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("openstack server show: %v\n%s", err, b)
	}
	return s
}

// An image from a server booted from the base image by name: the server
// gets the metadata (ansible_init_disable = "true" by default) and a new
// floating IP, is stopped, snapshotted by real Nova into an active image
// with the base image's bytes, tags, properties (an inherited one removed
// by skip_inherited_properties), visibility and protection; the server,
// its port, keypair and floating IP are gone.
func TestImageFromServer(t *testing.T) {
	tr := tier(t)
	clean(t, tr)
	name := uniqueName("rc-server")
	shown := filepath.Join(t.TempDir(), "server.json")
	r := mustBuild(t, tr, rcTemplate(t, tr, fmt.Sprintf(`
  source_image_name = %q
  floating_ip_network = %q
  instance_name = %q
  instance_metadata = { site = "realcloud" }
  image_name = %q
  image_tags = ["fat", "realcloud"]
  metadata = { build_site = "realcloud" }
  image_visibility = "private"
  skip_inherited_properties = ["os_version"]
  image_protected = true`, BaseImageName, FloatingNetwork, name, name), serverShow(name, shown)))
	mustContain(t, r.Output(), "Creating server "+name, "Allocating a floating IP", "Creating image "+name+" from server", "Releasing floating IP")
	s := readShown(t, shown)
	if s.Status != "ACTIVE" || s.Properties["ansible_init_disable"] != "true" || s.Properties["site"] != "realcloud" {
		t.Errorf("the build server as Nova showed it: %+v", s)
	}
	ic := client(t, tr, false, openstack.NewImageV2)
	img := imageNamed(t, ic, name)
	if img.Status != images.ImageStatusActive || img.DiskFormat != "raw" || img.Visibility != images.ImageVisibilityPrivate || !img.Protected {
		t.Errorf("image %s: status %s, disk_format %s, visibility %s, protected %v", img.ID, img.Status, img.DiskFormat, img.Visibility, img.Protected)
	}
	if img.Checksum != baseChecksum() {
		t.Errorf("image checksum %s, want the base image's %s", img.Checksum, baseChecksum())
	}
	if strings.Join(img.Tags, ",") != "fat,realcloud" && strings.Join(img.Tags, ",") != "realcloud,fat" {
		t.Errorf("image tags %v", img.Tags)
	}
	if img.Properties["build_site"] != "realcloud" {
		t.Errorf("image properties %v", img.Properties)
	}
	// Nova copies the base image's properties into the snapshot; the
	// skipped one is removed, the others stay.
	if _, ok := img.Properties["os_version"]; ok || img.Properties["os_distro"] != "rocky" {
		t.Errorf("inherited properties (os_version skipped, os_distro kept): %v", img.Properties)
	}
	// protected means protected, by real Glance
	if err := images.Delete(context.Background(), ic, img.ID).ExtractErr(); err == nil {
		t.Errorf("Glance deleted the protected image %s", img.ID)
	}
}

// An image from a volume: the base image by id, a boot volume created from
// it by real Cinder, the server deleted to free it, the volume uploaded
// (os-volume_upload_image) into an active image with the base image's
// bytes; the volume is deleted.
func TestImageFromVolume(t *testing.T) {
	tr := tier(t)
	clean(t, tr)
	ic := client(t, tr, false, openstack.NewImageV2)
	base := findImage(t, ic, BaseImageName)
	name := uniqueName("rc-volume")
	r := mustBuild(t, tr, rcTemplate(t, tr, fmt.Sprintf(`
  source_image = %q
  use_blockstorage_volume = true
  volume_size = 1
  image_name = %q
  image_disk_format = "raw"`, base.ID, name), ""))
	mustContain(t, r.Output(), "Creating boot volume", "Uploading volume", "Deleting boot volume")
	img := imageNamed(t, ic, name)
	if img.Status != images.ImageStatusActive || img.DiskFormat != "raw" {
		t.Errorf("image %s: status %s, disk_format %s", img.ID, img.Status, img.DiskFormat)
	}
	// The upload is the whole volume: the base image's bytes, then zeros.
	rc, err := imagedata.Download(context.Background(), ic, img.ID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	head := make([]byte, 64)
	if _, err := rc.Read(head); err != nil || !bytes.HasPrefix(head, BaseImage()[:40]) {
		t.Errorf("the uploaded volume starts %q (%v), want the base image's bytes", head, err)
	}
}

// The newest of the images a filter matches, with most_recent.
func TestSourceImageFilterMostRecent(t *testing.T) {
	tr := tier(t)
	clean(t, tr)
	ic := client(t, tr, false, openstack.NewImageV2)
	tag := uniqueName("nightly")
	var ids []string
	for i := 0; i < 2; i++ {
		im, err := images.Create(context.Background(), ic, images.CreateOpts{Name: fmt.Sprintf("rc-nightly-%d", i), Tags: []string{tag}, DiskFormat: "raw", ContainerFormat: "bare"}).Extract()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { deleteImage(t, ic, im.ID) })
		if err := imagedata.Upload(context.Background(), ic, im.ID, bytes.NewReader(BaseImage())).ExtractErr(); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, im.ID)
		time.Sleep(1100 * time.Millisecond) // Glance's created_at has one-second resolution
	}
	r := mustBuild(t, tr, rcTemplate(t, tr, fmt.Sprintf(`
  source_image_filter {
    filters {
  tags = [%q]
    }
  most_recent = true
  }
  image_name = "unused"
  skip_create_image = true`, tag), ""))
	mustContain(t, r.Output(), "Using source image rc-nightly-1 ("+ids[1]+")")
}

// A given floating IP (by address) is attached and left, detached.
func TestGivenFloatingIP(t *testing.T) {
	tr := tier(t)
	nc, fip := projectFloatingIP(t, tr)
	r := mustBuild(t, tr, rcTemplate(t, tr, fmt.Sprintf(`
  source_image_name = %q
  floating_ip = %q
  image_name = "unused"
  skip_create_image = true`, BaseImageName, fip.FloatingIP), ""))
	mustContain(t, r.Output(), "Floating IP "+fip.FloatingIP+" is attached", "Detaching floating IP")
	requireDetached(t, nc, fip.ID)
}

// projectFloatingIP is a new floating IP of the member's project, free
// (DOWN, on no port) and deleted when the test ends; the test's leftover
// count starts after it.
func projectFloatingIP(t *testing.T, tr *Tier) (*gophercloud.ServiceClient, *floatingips.FloatingIP) {
	t.Helper()
	nc := client(t, tr, false, openstack.NewNetworkV2)
	fip, err := floatingips.Create(context.Background(), nc, floatingips.CreateOpts{FloatingNetworkID: networkID(t, tr, FloatingNetwork)}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { floatingips.Delete(context.Background(), nc, fip.ID) })
	clean(t, tr)
	return nc, fip
}

// requireDetached: a floating IP the build borrowed stays, on no port.
func requireDetached(t *testing.T, nc *gophercloud.ServiceClient, id string) {
	t.Helper()
	got, err := floatingips.Get(context.Background(), nc, id).Extract()
	if err != nil || got.PortID != "" {
		t.Errorf("the borrowed floating IP must stay, detached: %+v %v", got, err)
	}
}

// Shared with a second project and accepted for it, as the member.
func TestImageMembers(t *testing.T) {
	tr := tier(t)
	clean(t, tr)
	share := shareProject(t, tr)
	name := uniqueName("rc-shared")
	mustBuild(t, tr, rcTemplate(t, tr, fmt.Sprintf(`
  source_image_name = %q
  image_name = %q
  image_visibility = "shared"
  image_members = [%q]
  image_auto_accept_members = true`, BaseImageName, name, share), ""))
	ic := client(t, tr, false, openstack.NewImageV2)
	img := imageNamed(t, ic, name)
	m, err := members.Get(context.Background(), ic, img.ID, share).Extract()
	if err != nil || m.Status != "accepted" {
		t.Errorf("membership of %s: %+v %v", share, m, err)
	}
}

// Application credentials instead of a password: the build authenticates
// with the credential's id and secret alone.
func TestApplicationCredential(t *testing.T) {
	tr := tier(t)
	p, err := tr.Provider(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	id, err := openstack.NewIdentityV3(p, EndpointOpts)
	if err != nil {
		t.Fatal(err)
	}
	user, err := tokens.Get(context.Background(), id, p.Token()).ExtractUser()
	if err != nil {
		t.Fatal(err)
	}
	ac, err := applicationcredentials.Create(context.Background(), id, user.ID, applicationcredentials.CreateOpts{Name: uniqueName("rc-appcred")}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { applicationcredentials.Delete(context.Background(), id, user.ID, ac.ID) })
	clean(t, tr)
	r := mustBuild(t, tr, rcTemplate(t, tr, fmt.Sprintf(`
  identity_endpoint = %q
  application_credential_id = %q
  application_credential_secret = %q
  source_image_name = %q
  image_name = "unused"
  skip_create_image = true`, AuthURL(tr.Ports), ac.ID, ac.Secret, BaseImageName), ""), "OS_CLOUD=")
	if strings.Contains(r.Output(), ac.Secret) {
		t.Errorf("the application credential's secret was printed:\n%s", r.Output())
	}
}

// A server that real Nova puts in ERROR (the tier's driver fails the
// spawn): the build fails naming the fault, and leaves nothing.
func TestSpawnFailure(t *testing.T) {
	tr := tier(t)
	clean(t, tr)
	r := build(t, tr, rcTemplate(t, tr, fmt.Sprintf(`
  source_image_name = %q
  floating_ip_network = %q
  instance_metadata = { realcloud_fail_spawn = "true" }
  image_name = %q`, BaseImageName, FloatingNetwork, uniqueName("rc-fail")), ""))
	if r.ExitCode == 0 {
		t.Fatalf("packer build passed with a failed spawn:\n%s", r.Output())
	}
	mustContain(t, r.Output(), "ERROR")
}

// Ctrl-C at each builder step in turn: with communicator none at the
// steps before any server and on the volume path, and on SSH builds of a
// real guest at every step that involves it (the keypair, the guest
// created and booting, its floating IP, SSH awaited and connected, the
// shell and our fatimage provisioner at work on it, the temporary key
// removed from it, the guest stopped, snapshotted, its image saved and
// updated; and a guest booted from its volume, from boot to the volume's
// upload): the signal goes to packer's process group as soon as the
// step's line is printed, while the step's calls to the real services
// are under way; packer must exit non-zero, and the real services count
// nothing left (the guest host no guest and no VM process: count.go).
// The builder's own unit and lab tests hold each call in flight with
// faults; here the services' own latency does.
func TestInterrupt(t *testing.T) {
	tr := tier(t)
	share := shareProject(t, tr)
	for _, tc := range interruptCases {
		t.Run(tc.step, func(t *testing.T) {
			clean(t, tr)
			name := uniqueName("rc-int")
			tpl, env := interruptTemplate(t, tr, tc.guest, tc.fat, tc.volume, name, share, tc.attrs)
			var atSignal func()
			if tc.running {
				atSignal = func() { requireGuestRunning(t, tr, name) }
			}
			out := interruptAt(t, tr, tpl, tc.waitFor, atSignal, env...)
			if tc.notReached != "" && strings.Contains(out, tc.notReached) {
				t.Errorf("the build went on to %q after Ctrl-C at %q:\n%s", tc.notReached, tc.waitFor, out)
			}
		})
	}
}

// interruptTemplate is the build of an interrupt case and the env it
// needs: a guest's SSH build (whose provisioner holds the session open
// when the signal lands: a shell's sleep, or with fat the fatimage
// provisioner's package transaction from guestPulp), or a build with
// communicator none sharing its image with share.
func interruptTemplate(t *testing.T, tr *Tier, guest, fat, volume bool, name, share, attrs string) (string, []string) {
	t.Helper()
	attrs = strings.ReplaceAll(attrs, "SHARE", share)
	switch {
	case fat:
		_, password, prov := fatProvisioner(t, "")
		return guestTemplateIn(t, tr, name, SSHSecurityGroup, attrs, prov), []string{"ARK_USERNAME=" + lab.ArkUser, "ARK_PASSWORD=" + password}
	case guest:
		return guestTemplateIn(t, tr, name, SSHSecurityGroup, attrs, `
  provisioner "shell" {
    inline = ["echo interrupt-provisioning", "sleep 5"]
  }
`), nil
	}
	return rcTemplate(t, tr, fmt.Sprintf(`
  source_image_name = %q
  floating_ip_network = %q
  use_blockstorage_volume = %v
  volume_size = 1
  image_name = %q
  image_visibility = "shared"
  image_members = [%q]
  image_auto_accept_members = true`, BaseImageName, FloatingNetwork, volume, name, share), ""), nil
}

// guestShared: a guest build's image shared with the share project (SHARE)
// and accepted for it, so the image update has work after its patch.
const guestShared = `image_visibility = "shared"
  image_members = ["SHARE"]
  image_auto_accept_members = true`

// interruptCases: the step, the line after which the signal is sent, and
// the build (volume: boot from a volume; guest: an SSH build of a real
// guest from GuestImageName, with attrs added to its source; fat: the
// guest's build runs our fatimage provisioner; running: the guest host
// runs the guest when the signal is sent, which proves the count sees
// a guest; notReached: a line of a later step, which the build must not
// print once the signal is sent).
var interruptCases = []struct {
	step, waitFor, notReached   string
	volume, guest, fat, running bool
	attrs                       string
}{
	// with communicator none: the steps before any server and the volume
	// path's; every step from the server's create on with a real guest
	// below (the guests' cases replaced those of a server without one)
	{step: "StepAuthenticate", waitFor: "Authenticating to"},
	{step: "StepLoadFlavor", waitFor: "Loading flavor"},
	{step: "StepSourceImage", waitFor: "Flavor m1.small"},
	{step: "StepCreateVolume", waitFor: "Creating boot volume", volume: true},
	{step: "StepCreateImage-volume-upload", waitFor: "Uploading volume", volume: true},
	{step: "guest-StepKeyPair", waitFor: "Creating the temporary keypair", guest: true},
	{step: "guest-StepRunServer-create", waitFor: "Creating server", guest: true},
	{step: "guest-StepRunServer-BUILD", waitFor: "to become ACTIVE", guest: true},
	{step: "guest-StepFloatingIP", waitFor: "Allocating a floating IP", guest: true, running: true},
	{step: "guest-StepConnect-waiting", waitFor: "Waiting for SSH to become available", guest: true, running: true},
	{step: "guest-StepProvision-connected", waitFor: "interrupt-provisioning", guest: true, running: true},
	{step: "guest-StepProvision-fatimage-packages", waitFor: "fatimage: packages", notReached: "fatimage: done", guest: true, fat: true, running: true},
	{step: "guest-StepCleanupTempKeys", waitFor: "Trying to remove ephemeral keys", guest: true, running: true,
		attrs: "ssh_clear_authorized_keys = true"},
	{step: "guest-StepStopServer", waitFor: "Stopping server", guest: true},
	{step: "guest-StepCreateImage-snapshot", waitFor: "Creating image", guest: true},
	{step: "guest-StepCreateImage-saving", waitFor: "to become active", guest: true},
	// members and their acceptance (a second authentication) follow
	// the patch: the build is still running when the signal lands
	{step: "guest-StepUpdateImage", waitFor: "Updating image", guest: true, attrs: guestShared},
	// a guest booted from its volume: booting from the volume's file, the
	// disk written back into it at the stop, the upload of what it wrote
	{step: "guest-volume-StepRunServer-BUILD", waitFor: "to become ACTIVE", guest: true, attrs: guestVolume},
	{step: "guest-volume-StepProvision-connected", waitFor: "interrupt-provisioning", guest: true, running: true, attrs: guestVolume},
	{step: "guest-volume-StepStopServer", waitFor: "Stopping server", guest: true, attrs: guestVolume},
	{step: "guest-volume-StepCreateImage-volume-upload", waitFor: "Uploading volume", guest: true, attrs: guestVolume},
}

// guestVolume: a guest build that boots from a volume (TestGuestVolumeBuild's).
const guestVolume = `use_blockstorage_volume = true
  volume_size             = 1
  image_disk_format       = "raw"`

// interruptAt runs packer build on template (with the tier's env and env)
// and sends Ctrl-C to its process group once waitFor is printed (after
// atSignal, unless nil); packer must exit non-zero. It returns packer's
// output.
func interruptAt(t *testing.T, tr *Tier, template, waitFor string, atSignal func(), env ...string) string {
	t.Helper()
	proc := startBuild(t, tr, template, env...)
	proc.WaitFor(t, waitFor, buildTimeout)
	if atSignal != nil {
		atSignal()
	}
	if err := proc.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	res := proc.Wait(t, buildTimeout)
	if res.ExitCode == 0 {
		// the image would count as a leftover too
		t.Fatalf("packer exited 0 after Ctrl-C:\n%s", res.Output())
	}
	return res.Output()
}

// requireGuestRunning: the guest host runs the guest of the server called
// name, and processes run in its VMs.
func requireGuestRunning(t *testing.T, tr *Tier, name string) {
	t.Helper()
	l, err := guests.List(context.Background(), tr.GuestSocket())
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range l.Servers {
		if g.Name == name && g.Power == "running" && l.Processes > 0 {
			return
		}
	}
	t.Errorf("the guest host runs no guest %s: %+v", name, l)
}

// shareProject is the second project of the member (the env file's
// LAB_SHARE_PROJECT_ID).
func shareProject(t *testing.T, tr *Tier) string {
	t.Helper()
	env, err := tr.Env()
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "LAB_SHARE_PROJECT_ID="); ok && v != "" {
			return v
		}
	}
	t.Fatal("the env file has no LAB_SHARE_PROJECT_ID")
	return ""
}

func networkID(t *testing.T, tr *Tier, name string) string {
	t.Helper()
	return networkNamed(t, client(t, tr, false, openstack.NewNetworkV2), name)
}

// rcTemplate is a build of one fatimage-openstack source booting on the
// tier's tenant network with communicator none (no guest runs: nothing
// could answer SSH); attrs are the source's other attributes, extra what
// the build block holds besides the source.
func rcTemplate(t *testing.T, tr *Tier, attrs, extra string) string {
	t.Helper()
	return fmt.Sprintf(`
source "fatimage-openstack" "rc" {
  flavor       = "m1.small"
  networks     = [%q]
  communicator = "none"
%s
}
build {
  sources = ["source.fatimage-openstack.rc"]
%s}
`, networkID(t, tr, TenantNetwork), attrs, extra)
}

// mustBuild is build, failing the test when packer does.
func mustBuild(t *testing.T, tr *Tier, template string, extra ...string) packertest.Result {
	t.Helper()
	r := build(t, tr, template, extra...)
	if r.ExitCode != 0 {
		t.Fatalf("packer build failed:\n%s", r.Output())
	}
	return r
}
