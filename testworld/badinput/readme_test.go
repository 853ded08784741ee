package badinput

import (
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/quickstart"
)

// TestReadmeQuickStart follows the README's user path up to `packer
// validate`, with the README's own site variables and no network: the
// install command on a release-like build, then each quick-start command
// before the build (`packer init` finds the plugin installed and fetches
// nothing; validate accepts the template against the site's appliance, a
// private tree of the real one, its environment activated).
// testworld/e2e's TestReadmeQuickStart runs the build too, on the lab.
func TestReadmeQuickStart(t *testing.T) {
	p := packertest.Setup(t)
	n := newNetwork(t)
	path := quickstart.Read(t)
	dir := t.TempDir()
	site := path.Lay(t, dir, path.Vars)
	env := append(append(n.env(dir), site...), "ARK_USERNAME=site", "ARK_PASSWORD=s3cret", "OS_CLOUD=")
	env = path.InstallRelease(t, p, dir, env)

	var ran []string
	for _, c := range path.Commands {
		if strings.HasPrefix(c, "packer build") {
			continue // the lab's test builds
		}
		r := quickstart.Run(t, p, dir, env, c)
		if r.ExitCode != 0 {
			t.Fatalf("%s: exit %d\n%s", c, r.ExitCode, r.Output())
		}
		if strings.Contains(r.Output(), "s3cret") {
			t.Errorf("%s shows the password:\n%s", c, r.Output())
		}
		ran = append(ran, c)
		if strings.HasPrefix(c, "packer validate") && !strings.Contains(r.Output(), "The configuration is valid.") {
			t.Errorf("%s:\n%s", c, r.Output())
		}
	}
	if len(ran) < 2 || !strings.HasPrefix(ran[0], "packer init") || !strings.HasPrefix(ran[len(ran)-1], "packer validate") {
		t.Errorf("ran %q; the README's quick start should init, then validate", ran)
	}
	n.requireQuiet(t)
}
