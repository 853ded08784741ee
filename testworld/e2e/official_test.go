package e2e

import (
	"fmt"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/logtail"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
)

// officialPlugin is the path of an official plugin binary built by `make
// official-tools` from tools/official: OFFICIAL_PLUGIN_DIR, else
// .tools/bin. Missing, the test fails under FATIMAGE_E2E=1 and is
// skipped otherwise, like every end-to-end test.
func officialPlugin(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv("OFFICIAL_PLUGIN_DIR")
	if dir == "" {
		root, err := packertest.ModuleRoot()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(root, ".tools", "bin")
	}
	bin := filepath.Join(dir, name)
	if _, err := os.Stat(bin); err != nil {
		needs.Unavailable(t, fmt.Sprintf("%s not built: run `make official-tools` or set OFFICIAL_PLUGIN_DIR", bin))
	}
	return bin
}

// TestOfficialBuilderOnLab runs the official openstack builder with a
// shell provisioner against the lab, both image paths (server snapshot
// and volume upload): each builds an active image and leaves nothing
// behind. Every call it makes must be answered as real OpenStack answers.
func TestOfficialBuilderOnLab(t *testing.T) {
	bin := officialPlugin(t, "packer-plugin-openstack")
	p := packertest.Setup(t)
	home := t.TempDir()
	if r := p.Run(t, home, nil, "plugins", "install", "--path", bin, "github.com/hashicorp/openstack"); r.ExitCode != 0 {
		t.Fatalf("packer plugins install: %s", r.Output())
	}
	for _, volume := range []bool{false, true} {
		t.Run(fmt.Sprintf("use_blockstorage_volume=%v", volume), func(t *testing.T) {
			name := fmt.Sprintf("e2e-official-%v-%d", volume, time.Now().UnixNano())
			r := build(t, []string{"official.pkr.hcl"}, "-var", "image_name="+name, "-var", fmt.Sprintf("use_blockstorage_volume=%v", volume))
			t.Logf("packer output (last lines):\n%s", logtail.Lines(r.Output(), 15))
			if r.ExitCode != 0 {
				t.Fatalf("the official builder failed on the lab:\n%s", r.Output())
			}
			img := findImage(t, name)
			if img.Status != "active" {
				t.Errorf("image %s is %s", img.ID, img.Status)
			}
			if strings.Contains(r.Output(), "There is no such action") {
				t.Errorf("the lab refused an action real OpenStack supports:\n%s", r.Output())
			}
			labtest.RequireClean(t, theLab)
		})
	}
}
