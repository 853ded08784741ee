package e2e

// Issue 13: fatimage-openstack is a drop-in for the official builder. The
// appliance's own template (testdata/appliance, the source type renamed)
// validates in every combination sites use, and builds on the lab with
// the official meanings: the server named after the image, the chosen
// floating IP, ports before networks, image_type = image on the image.
// The official docs' examples validate as they are written.

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"golang.org/x/crypto/ssh"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
)

// offlineEnv is the RC file of the official docs: enough for Prepare, and
// pointing at no cloud (validation makes no call).
var offlineEnv = []string{
	"OS_AUTH_URL=https://identity.myprovider/v3", "OS_USERNAME=myuser", "OS_PASSWORD=rc-password-3c9d",
	"OS_USER_DOMAIN_NAME=mydomain", "OS_PROJECT_DOMAIN_NAME=mydomain", "OS_PROJECT_NAME=myproject",
}

// validate runs packer validate on a copy of testdata/<dir>.
func validate(t *testing.T, p *packertest.Packer, dir string, env []string, args ...string) packertest.Result {
	t.Helper()
	work := t.TempDir()
	if err := os.CopyFS(work, os.DirFS(filepath.Join("testdata", dir))); err != nil {
		t.Fatal(err)
	}
	return p.Run(t, work, env, append([]string{"validate"}, args...)...)
}

// sshKeyFile writes a fresh private key (what a bastion key file holds).
func sshKeyFile(t *testing.T) string {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bastion_key")
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// combination is one way a site sets the appliance's variables.
type combination struct {
	volume             bool
	fip                string // "ip", "network", "both", "neither"
	bastion, debugKey  bool
	byName, createWait bool
}

func (c combination) String() string {
	return fmt.Sprintf("volume=%v/fip=%s/bastion=%v/debugkey=%v/byname=%v/wait=%v", c.volume, c.fip, c.bastion, c.debugKey, c.byName, c.createWait)
}

func allCombinations() []combination {
	var out []combination
	for _, volume := range []bool{true, false} {
		for _, fip := range []string{"ip", "network", "both", "neither"} {
			for _, bastion := range []bool{false, true} {
				for _, debugKey := range []bool{false, true} {
					for _, byName := range []bool{false, true} {
						for _, wait := range []bool{false, true} {
							out = append(out, combination{volume, fip, bastion, debugKey, byName, wait})
						}
					}
				}
			}
		}
	}
	return out
}

// vars are the -var flags of a combination, as a site's pkrvars would set them.
func (c combination) vars(bastionKey string) []string {
	v := []string{"-var", "repo_root=/srv/appliance", "-var", "environment_root=/srv/appliance/environments/site",
		"-var", `networks=["0d7c3f4e-1b2a-4c5d-8e9f-0a1b2c3d4e5f"]`, "-var", "flavor=general.v1.medium",
		"-var", fmt.Sprintf("use_blockstorage_volume=%v", c.volume)}
	switch c.fip {
	case "ip", "both":
		v = append(v, "-var", "floating_ip=7a1e0c55-3a0f-4f51-9d8e-2b7c6d5e4f30")
	}
	switch c.fip {
	case "network", "both":
		v = append(v, "-var", "floating_ip_network=external")
	}
	if c.bastion {
		v = append(v, "-var", "ssh_bastion_host=bastion.example.org", "-var", "ssh_bastion_username=rocky",
			"-var", "ssh_bastion_private_key_file="+bastionKey)
	}
	if c.debugKey {
		v = append(v, "-var", "ssh_debug_public_key=ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDebugKeyForConformanceTestsOnly000000000 debug@site")
	}
	if c.byName {
		v = append(v, "-var", "source_image_name=Rocky-9-GenericCloud-Base-9.6-20250531.0.x86_64")
	} else {
		v = append(v, "-var", "source_image=3f1d8a2e-6b4c-4e7f-9a0d-5c2b1e8f7a69")
	}
	if c.createWait {
		v = append(v, "-var", "image_creation_wait=30")
	}
	return v
}

// wantWarnings are the warnings the official builder's silent behaviour
// becomes here.
func (c combination) wantWarnings() []string {
	var w []string
	if !c.volume {
		w = append(w, `image_disk_format: "raw" ignored because use_blockstorage_volume is false`,
			"volume_name, volume_size: ignored because use_blockstorage_volume is false")
	}
	if c.fip == "both" {
		w = append(w, `floating_ip_network: ignored, the given floating_ip "7a1e0c55-3a0f-4f51-9d8e-2b7c6d5e4f30" is used`)
	}
	return w
}

var warningRE = regexp.MustCompile(`(?m)^Warning: (.*)$`)

func TestConformanceApplianceValidates(t *testing.T) {
	p := packertest.Setup(t)
	key := sshKeyFile(t)
	sem := make(chan struct{}, 3) // the machine is shared: a few packers at a time
	for _, c := range allCombinations() {
		t.Run(c.String(), func(t *testing.T) {
			t.Parallel()
			sem <- struct{}{}
			defer func() { <-sem }()
			r := validate(t, p, "appliance", offlineEnv, append(c.vars(key), ".")...)
			if r.ExitCode != 0 || !strings.Contains(r.Output(), "The configuration is valid.") {
				t.Fatalf("packer validate failed:\n%s", r.Output())
			}
			got := warningRE.FindAllStringSubmatch(r.Output(), -1)
			want := c.wantWarnings()
			if len(got) != len(want) {
				t.Errorf("warnings %q, want %q", got, want)
			}
			for _, w := range want {
				if !strings.Contains(r.Output(), "Warning: "+w) {
					t.Errorf("missing warning %q in:\n%s", w, r.Output())
				}
			}
			if strings.Contains(r.Output(), "rc-password-3c9d") {
				t.Errorf("the password was printed:\n%s", r.Output())
			}
		})
	}
}

// The examples of the official builder's docs, with the type renamed.
func TestConformanceOfficialExamplesValidate(t *testing.T) {
	p := packertest.Setup(t)
	files, err := filepath.Glob("testdata/official-examples/*")
	if err != nil || len(files) != 9 {
		t.Fatalf("examples %v %v", files, err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		if name == "README.md" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			r := validate(t, p, "official-examples", offlineEnv, name)
			if name == "volume.pkr.hcl" {
				// The official docs' HCL2 form of this example writes
				// networks = "<id>", which the official builder's own
				// list(string) attribute refuses exactly so (its JSON form
				// is decoded weakly and validates, below).
				if r.ExitCode == 0 || !strings.Contains(r.Output(), `Inappropriate value for attribute "networks": list of string required.`) {
					t.Fatalf("want the official builder's refusal of networks as a string:\n%s", r.Output())
				}
				return
			}
			if r.ExitCode != 0 || !strings.Contains(r.Output(), "The configuration is valid.") {
				t.Fatalf("packer validate failed:\n%s", r.Output())
			}
			if strings.Contains(r.Output(), "Warning:") {
				t.Errorf("warnings for an official example:\n%s", r.Output())
			}
		})
	}
}

// labNetworkClient is a network client on the lab, as its user.
func labNetworkClient(t *testing.T) *gophercloud.ServiceClient {
	t.Helper()
	return labClient(t, openstack.NewNetworkV2)
}

func networkID(t *testing.T, c *gophercloud.ServiceClient, name string) string {
	t.Helper()
	pages, err := networks.List(c, networks.ListOpts{Name: name}).AllPages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	all, _ := networks.ExtractNetworks(pages)
	if len(all) != 1 {
		t.Fatalf("networks named %s: %d", name, len(all))
	}
	return all[0].ID
}

// buildAppliance runs packer build on the appliance template against the
// lab with the given -var flags.
func buildAppliance(t *testing.T, vars ...string) (packertest.Result, string) {
	t.Helper()
	p := packertest.Setup(t)
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/appliance")); err != nil {
		t.Fatal(err)
	}
	net := networkID(t, labNetworkClient(t), "lab-net")
	args := []string{"build", "-var", "repo_root=" + dir, "-var", "environment_root=" + dir,
		"-var", fmt.Sprintf(`networks=["%s"]`, net), "-var", "flavor=m1.small",
		"-var", "manifest_output_path=" + filepath.Join(dir, "manifest.json")}
	args = append(append(args, vars...), ".")
	return p.Run(t, dir, theLab.Environ(), args...), dir
}

// manifestImage is the image id the manifest post-processor recorded, as
// the appliance's CI reads it (.builds[-1].artifact_id).
func manifestImage(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Builds []struct {
			ArtifactID string            `json:"artifact_id"`
			CustomData map[string]string `json:"custom_data"`
		} `json:"builds"`
	}
	if err := json.Unmarshal(b, &m); err != nil || len(m.Builds) == 0 {
		t.Fatalf("manifest %s: %v", b, err)
	}
	last := m.Builds[len(m.Builds)-1]
	if last.CustomData["source"] != "openhpc" {
		t.Errorf("manifest custom_data %v", last.CustomData)
	}
	return last.ArtifactID
}

func getImageByID(t *testing.T, id string) *images.Image {
	t.Helper()
	c := imageClient(t)
	img, err := images.Get(context.Background(), c, id).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { images.Delete(context.Background(), c, id) })
	return img
}

// The appliance's default: volume boot, a temporary floating IP from
// floating_ip_network, the base image by name, image_creation_wait set.
func TestConformanceApplianceBuildVolume(t *testing.T) {
	labtest.Require(t)
	name := fmt.Sprintf("conf-vol-%d", time.Now().Unix())
	r, dir := buildAppliance(t, "-var", "image_name="+name, "-var", "image_name_version=",
		"-var", "source_image_name=Rocky-9-GenericCloud-Base-9.6", "-var", "floating_ip_network=public",
		"-var", "image_creation_wait=1", "-var", `metadata={"site":"lab"}`)
	if r.ExitCode != 0 {
		t.Fatalf("packer build failed:\n%s", r.Output())
	}
	out := r.Output()
	if !strings.Contains(out, "Creating server "+name+"...") || !strings.Contains(out, "conformance-hostname="+name) {
		t.Errorf("the build VM is not named (and hostnamed) after the image %s:\n%s", name, out)
	}
	if !strings.Contains(out, "Waiting 1 more seconds (image_creation_wait)") {
		t.Errorf("image_creation_wait was not honoured:\n%s", out)
	}
	img := getImageByID(t, manifestImage(t, dir))
	if img.Name != name || img.DiskFormat != "raw" || img.Visibility != images.ImageVisibilityPrivate {
		t.Errorf("image %s %s %s", img.Name, img.DiskFormat, img.Visibility)
	}
	if img.Properties["image_type"] != "image" || img.Properties["site"] != "lab" {
		t.Errorf("image properties %v, want image_type = image and site = lab", img.Properties)
	}
	labtest.RequireClean(t, theLab)
}

// No volume, and both floating_ip and floating_ip_network as the appliance
// passes them: the given floating IP is used (and left, detached), the
// network ignored with a warning; the base image by ID.
func TestConformanceApplianceBuildGivenFloatingIP(t *testing.T) {
	labtest.Require(t)
	nc := labNetworkClient(t)
	fip, err := floatingips.Create(context.Background(), nc, floatingips.CreateOpts{FloatingNetworkID: networkID(t, nc, "public")}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	defer floatingips.Delete(context.Background(), nc, fip.ID)
	imgs := imageClient(t)
	pages, err := images.List(imgs, images.ListOpts{Name: "Rocky-9-GenericCloud-Base-9.6"}).AllPages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	base, _ := images.ExtractImages(pages)
	if len(base) != 1 {
		t.Fatalf("base images %d", len(base))
	}
	name := fmt.Sprintf("conf-fip-%d", time.Now().Unix())
	r, dir := buildAppliance(t, "-var", "image_name="+name, "-var", "image_name_version=",
		"-var", "source_image="+base[0].ID, "-var", "use_blockstorage_volume=false",
		"-var", "floating_ip="+fip.ID, "-var", "floating_ip_network=public")
	if r.ExitCode != 0 {
		t.Fatalf("packer build failed:\n%s", r.Output())
	}
	out := r.Output()
	for _, want := range []string{
		"Floating IP " + fip.FloatingIP + " is attached",
		"conformance-hostname=" + name,
		`floating_ip_network: ignored, the given floating_ip "` + fip.ID + `" is used`,
		"volume_name, volume_size: ignored because use_blockstorage_volume is false",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	img := getImageByID(t, manifestImage(t, dir))
	if img.Properties["image_type"] != "image" || img.Name != name {
		t.Errorf("image %s properties %v", img.Name, img.Properties)
	}
	got, err := floatingips.Get(context.Background(), nc, fip.ID).Extract()
	if err != nil || got.PortID != "" {
		t.Errorf("the given floating IP must stay, detached: %+v %v", got, err)
	}
	floatingips.Delete(context.Background(), nc, fip.ID)
	labtest.RequireClean(t, theLab)
}

// ports come before networks: the guest's first NIC is the given port.
func TestConformancePortsBeforeNetworks(t *testing.T) {
	labtest.Require(t)
	nc := labNetworkClient(t)
	labNet := networkID(t, nc, "lab-net")
	port, err := ports.Create(context.Background(), nc, ports.CreateOpts{NetworkID: labNet, Name: "conformance-port"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	defer ports.Delete(context.Background(), nc, port.ID)
	name := fmt.Sprintf("conf-nic-%d", time.Now().Unix())
	tpl := fmt.Sprintf(`
packer {
  required_plugins {
    fatimage = {
      source  = "github.com/stackhpc/fatimage"
      version = ">= 0.1.0"
    }
  }
}
source "fatimage-openstack" "nic" {
  source_image_name   = "Rocky-9-GenericCloud-Base-9.6"
  flavor              = "m1.small"
  networks            = [%q]
  ports               = [%q]
  floating_ip_network = "public"
  ssh_username        = "rocky"
  ssh_timeout         = "2m"
  image_name          = %q
  skip_create_image   = true
}
build {
  sources = ["source.fatimage-openstack.nic"]
  provisioner "shell" {
    inline = ["echo conformance-addrs=$(ip -4 -o addr show scope global | awk '{print $4}' | cut -d/ -f1 | head -n1)"]
  }
}
`, labNet, port.ID, name)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "nic.pkr.hcl"), []byte(tpl), 0o600); err != nil {
		t.Fatal(err)
	}
	p := packertest.Setup(t)
	r := p.Run(t, dir, theLab.Environ(), "build", ".")
	if r.ExitCode != 0 {
		t.Fatalf("packer build failed:\n%s", r.Output())
	}
	m := regexp.MustCompile(`conformance-addrs=(\S+)`).FindStringSubmatch(r.Output())
	if m == nil || len(port.FixedIPs) == 0 || m[1] != port.FixedIPs[0].IPAddress {
		t.Errorf("the guest's primary address %v, want the given port's %v:\n%s", m, port.FixedIPs, r.Output())
	}
	got, err := ports.Get(context.Background(), nc, port.ID).Extract()
	if err != nil || got.DeviceID != "" {
		t.Errorf("the given port must survive, detached: %+v %v", got, err)
	}
	ports.Delete(context.Background(), nc, port.ID)
	labtest.RequireClean(t, theLab)
}
