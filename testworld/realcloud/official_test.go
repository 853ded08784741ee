//go:build realcloud

package realcloud

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
)

// TestOfficialBuilder runs the official openstack builder
// (hashicorp/packer-plugin-openstack, pinned in tools/official; the
// binary from OFFICIAL_PLUGIN_DIR, else .tools/bin: make official-tools)
// against the real services, both image paths, with communicator none:
// what the lab's TestOfficialBuilderOnLab checks against the double; and
// a whole build with SSH on a real guest (the official builder's own
// temporary keypair, the floating IP, a shell provisioner), whose image
// boots as a new server that answers SSH with what the build wrote.
func TestOfficialBuilder(t *testing.T) {
	tr := tier(t)
	dir := os.Getenv("OFFICIAL_PLUGIN_DIR")
	if dir == "" {
		root, err := packertest.ModuleRoot()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(root, ".tools", "bin")
	}
	bin := filepath.Join(dir, "packer-plugin-openstack")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s not built: run `make official-tools` or set OFFICIAL_PLUGIN_DIR", bin)
	}
	p := packertest.Setup(t)
	if r := p.Run(t, t.TempDir(), nil, "plugins", "install", "--path", bin, "github.com/hashicorp/openstack"); r.ExitCode != 0 {
		t.Fatalf("packer plugins install: %s", r.Output())
	}
	ic := client(t, tr, false, openstack.NewImageV2)
	cases := []struct{ name, image, comm, provisioner string }{
		{"use_blockstorage_volume=false", BaseImageName, `communicator = "none"`, ""},
		{"use_blockstorage_volume=true", BaseImageName, `communicator = "none"`, ""},
		{"ssh", GuestImageName, fmt.Sprintf("ssh_username = \"rocky\"\n  security_groups = [%q]", SSHSecurityGroup), `provisioner "shell" { inline = ["echo official-%s | sudo tee /etc/rc-marker"] }`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clean(t, tr)
			name := uniqueName("rc-official")
			volume := c.name == "use_blockstorage_volume=true"
			prov := c.provisioner
			if prov != "" {
				prov = fmt.Sprintf(prov, name)
			}
			tpl := fmt.Sprintf(`
packer {
  required_plugins {
    openstack = {
      source  = "github.com/hashicorp/openstack"
      version = ">= 1.1.2"
    }
  }
}
source "openstack" "rc" {
  cloud                   = %q
  source_image_name       = %q
  flavor                  = "m1.small"
  networks                = [%q]
  floating_ip_network     = %q
  %s
  use_blockstorage_volume = %v
  volume_size             = 1
  image_name              = %q
  image_visibility        = "private"
  image_tags              = ["official", "realcloud"]
}
build {
  sources = ["source.openstack.rc"]
  %s
}
`, CloudName, c.image, networkID(t, tr, TenantNetwork), FloatingNetwork, c.comm, volume, name, prov)
			work := t.TempDir()
			if err := os.WriteFile(filepath.Join(work, "official.pkr.hcl"), []byte(tpl), 0o600); err != nil {
				t.Fatal(err)
			}
			env, err := tr.Env()
			if err != nil {
				t.Fatal(err)
			}
			r := runPacker(t, p, work, env, "build", ".")
			if r.ExitCode != 0 {
				t.Fatalf("the official builder failed on real OpenStack:\n%s", r.Output())
			}
			img := imageNamed(t, ic, name)
			if img.Status != images.ImageStatusActive {
				t.Errorf("image %s is %s", img.ID, img.Status)
			}
			if c.name == "ssh" {
				_, out := bootAndSSH(t, tr, client(t, tr, false, openstack.NewComputeV2), img.ID, name+"-boot", "cat /etc/rc-marker")
				if !strings.Contains(out, "official-"+name) {
					t.Errorf("the new server has no /etc/rc-marker from the official build:\n%s", out)
				}
			}
		})
	}
}
