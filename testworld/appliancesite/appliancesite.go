// Package appliancesite gives tests a site's Slurm appliance checkout as a
// deploy host has it: the real appliance and its Galaxy roles and
// collections (../shared/appliance, see its README), in a private tree so
// that a test can put an environment of its own beside the appliance's
// (the checkout itself is read-only and never changed).
package appliancesite

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
)

// DirEnv overrides where the shared appliance is.
const DirEnv = "FATIMAGE_APPLIANCE_DIR"

// Overrides is this package's site environment (overrides/), on top of the
// appliance's .stackhpc.
const Overrides = "overrides"

// Extra is this package's site environment for the extra builds
// (extra/): the appliance's common inventory and its own group_vars,
// which point the doca and cuda roles at the lab's vendor mirrors and
// the lustre role at its git server.
const Extra = "extra"

// Dir is the shared appliance directory (holding ansible-slurm-appliance
// and galaxy), or "" when there is none.
func Dir() string {
	if d := os.Getenv(DirEnv); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	for _, d := range []string{filepath.Join(root, "..", "shared", "appliance"), filepath.Join(root, "..", "..", "shared", "appliance")} {
		if _, err := os.Stat(filepath.Join(d, "ansible-slurm-appliance", "ansible", "fatimage.yml")); err == nil {
			return filepath.Clean(d)
		}
	}
	return ""
}

// Checkout is the real appliance checkout, stopping tb (needs.Unavailable)
// when it or ansible-playbook is missing.
func Checkout(tb testing.TB) string {
	tb.Helper()
	needs.Tools(tb, "ansible-playbook", "ansible-inventory")
	d := Dir()
	if d == "" {
		needs.Unavailable(tb, "no appliance checkout: ../shared/appliance not found (set "+DirEnv+")")
	}
	return filepath.Join(d, "ansible-slurm-appliance")
}

// New is a site on a private tree of the real checkout: env names the
// environment (".stackhpc", Overrides for this package's on top of it, or
// Extra), and groups the build's inventory groups. The tree links every
// entry of the checkout; its environments directory also holds Overrides
// and Extra. Its collections path has the shared Galaxy collections and
// this package's stand-in prometheus.prometheus.
func New(tb testing.TB, env string, groups ...string) *appliance.Site {
	tb.Helper()
	src := Checkout(tb)
	repo := filepath.Join(tb.TempDir(), "appliance")
	must(tb, os.MkdirAll(filepath.Join(repo, "environments"), 0o755))
	link(tb, src, repo, "environments")
	link(tb, filepath.Join(src, "environments"), filepath.Join(repo, "environments"))
	_, file, _, _ := runtime.Caller(0)
	for _, e := range []string{Overrides, Extra} {
		if out, err := exec.Command("cp", "-r", filepath.Join(filepath.Dir(file), e), filepath.Join(repo, "environments")).CombinedOutput(); err != nil {
			tb.Fatalf("copying the site environment %s: %v: %s", e, err, out)
		}
	}
	galaxy := filepath.Join(Dir(), "galaxy")
	// the stand-in prometheus.prometheus (collections/) beside the shared
	// Galaxy content: a site's deploy host has the collection, which is
	// not available offline here
	return &appliance.Site{
		Repo: repo, Environment: filepath.Join(repo, "environments", env), Groups: groups,
		RolesPath:       []string{filepath.Join(galaxy, "roles")},
		CollectionsPath: []string{filepath.Join(galaxy, "collections"), filepath.Join(filepath.Dir(file), "collections")},
	}
}

// link links every entry of src (but skip) into dst.
func link(tb testing.TB, src, dst string, skip ...string) {
	entries, err := os.ReadDir(src)
	must(tb, err)
	for _, e := range entries {
		if len(skip) > 0 && e.Name() == skip[0] {
			continue
		}
		must(tb, os.Symlink(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())))
	}
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}
