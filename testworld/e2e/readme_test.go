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
// then init, validate and build of the README's template beside an
// appliance checkout, with the site's variables set for the lab's cloud
// and Pulp. The image's groups are "nfs": the lab's release server serves
// stand-ins whose checksums differ from the built-in groups' real ones,
// so the whole "fatimage" set would need the overrides example/ passes.
func TestReadmeQuickStart(t *testing.T) {
	labtest.Require(t)
	p := packertest.Setup(t)
	path := quickstart.Read(t)
	dir := t.TempDir()
	vars := fmt.Sprintf(`environment         = "mysite"
inventory_groups    = "nfs"
ark_content_url     = %q
source_image_name   = "Rocky-9-GenericCloud-Base-9.6"
flavor              = "m1.small"
floating_ip_network = "public"
`, theLab.Env["ARK_CONTENT_URL"])
	path.Lay(t, dir, vars, "mysite")
	env := path.InstallRelease(t, p, dir, theLab.Environ())

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
