package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/buildtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/quickstart"
)

// TestReadmeQuickStart is the README's user path on the lab, every
// command as the README writes it: the install command on a release-like
// build (in place of the published archive `packer init` would fetch),
// then init, validate and build of the README's template in the shell of
// a site whose environment is activated (a private tree of the real
// appliance with testworld/appliancesite's environment, the lab's pins in
// its checkout), with the site's variables set for the lab's cloud and
// Pulp and its git server and package index as the mirrors. The image's
// groups are "nfs,rebuild": the lab's release server serves stand-ins
// whose checksums differ from the real ones, so the whole "fatimage" set
// would need the overrides example/ passes; and the appliance's
// fatimage.yml installs rebuild's slurm tools on every build, which
// through the site's Ansible would reach for EPEL's public mirrors (the
// lab is offline) where the plugin's rebuild group installs them from
// the pinned snapshots.
func TestReadmeQuickStart(t *testing.T) {
	labtest.Require(t)
	p := packertest.Setup(t)
	path := quickstart.Read(t)
	dir := t.TempDir()
	vars := fmt.Sprintf(`inventory_groups      = "nfs,rebuild"
ark_content_url       = %q
os_version            = "9.6"
source_image_name     = "Rocky-9-GenericCloud-Base-9.6"
flavor                = "m1.small"
floating_ip_network   = "public"
git_base_url          = %q
python_index_url      = %q
python_index_insecure = true
`, theLab.Env["ARK_CONTENT_URL"], theLab.Env["LAB_GIT_URL"], theLab.Env["LAB_PYPI_URL"])
	site := path.Lay(t, dir, vars)
	env := path.InstallRelease(t, p, dir, append(theLab.Environ(), site...))

	var out string
	for _, c := range path.Commands {
		r := quickstart.Run(t, p, dir, env, c)
		if r.ExitCode != 0 {
			t.Fatalf("%s: exit %d\n%s", c, r.ExitCode, r.Output())
		}
		out = r.Output()
	}
	if !strings.HasPrefix(path.Commands[len(path.Commands)-1], "packer build") {
		t.Fatalf("the README's last command is %q, not the build", path.Commands[len(path.Commands)-1])
	}
	// the artifact reads as the official builder's: "An image was created: ID"
	m := regexp.MustCompile(`An image was created: ([0-9a-f-]{36})`).FindStringSubmatch(out)
	n := regexp.MustCompile(`Creating image (openhpc-RL9-\S+) from server`).FindStringSubmatch(out)
	if m == nil || n == nil {
		t.Fatalf("the build names no image:\n%s", out)
	}
	img := findImage(t, n[1])
	if img.ID != m[1] {
		t.Fatalf("image %s is %s, the build said %s", n[1], img.ID, m[1])
	}
	// image.json records the groups the inventory resolved to
	files := imageFiles(t, img.ID)
	var info struct {
		Groups []string `json:"groups"`
	}
	data, err := os.ReadFile(filepath.Join(files, "var", "lib", "image", "image.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &info); err != nil || !slices.Contains(info.Groups, "nfs") {
		t.Errorf("image.json's groups %v (%v) lack nfs, the README's inventory_groups as the lab sets it", info.Groups, err)
	}
	buildtest.RequireNoSecrets(t, theLab, "packer's output", []byte(out))
	buildtest.RequireNoSecretsInTree(t, theLab, files, 10)
	labtest.RequireClean(t, theLab)
}
