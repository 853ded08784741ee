package e2e

import (
	"crypto/sha256"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/gpgkeys"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
)

// checkBuiltinKeys checks the "Ark repo files + GPG keys" row from
// outside the booted image: every standard repository the build used
// (image.json's snapshots, by repository name) has its built-in RL9 key
// imported in the rpm database, and its file at the appliance's path,
// root 0644, holding the built-in block unless a package owns that file
// (epel-release ships RPM-GPG-KEY-EPEL-9; on Rocky it is the same key, in
// the lab the lab's). example/ passes no key files, so these came from
// the plugin. The lab signs nothing with them (docs/lab.md): this checks
// that they are written and imported, not that they verify the vendors'
// packages.
func checkBuiltinKeys(t *testing.T, c *labtest.Client, info map[string]any) {
	t.Helper()
	snaps, _ := info["snapshots"].(map[string]any)
	want := map[string]gpgkeys.Key{}
	for repo := range snaps {
		if k, ok := gpgkeys.ForRepo(repo, "9"); ok {
			want[k.Name] = k
		}
	}
	// the example's repositories bring at least EPEL's, OpenHPC's and the
	// Storage SIG's (the appliance's fatimage set)
	for _, n := range []string{"epel", "openhpc", "ceph"} {
		if _, ok := want[n]; !ok {
			t.Errorf("image.json snapshots %v: no repository with the built-in key %s", keysOf(snaps), n)
		}
	}
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		k := want[n]
		if got := c.Run(t, "rpm -q gpg-pubkey-"+k.ID()+" >/dev/null && echo imported || echo missing"); got != "imported" {
			t.Errorf("built-in key %s (%s): %s in the rpm database", n, k.Fingerprint, got)
		}
		if got := c.Run(t, "stat -c '%U:%G %a' "+k.Path); got != "root:root 644" {
			t.Errorf("%s: %s, want root:root 644", k.Path, got)
		}
		if c.Run(t, "if rpm -qf "+k.Path+" >/dev/null 2>&1; then echo owned; else echo none; fi") == "owned" {
			continue // a package's file (epel-release's key)
		}
		sum := c.Run(t, "sha256sum < "+k.Path+" | cut -d' ' -f1")
		if w := fmt.Sprintf("%x", sha256.Sum256(k.Armored())); sum != w {
			t.Errorf("%s: sha256 %s, the built-in %s block has %s", k.Path, sum, n, w)
		}
	}
	// and the image's own Rocky key (the lab's key, which signs every lab
	// package) besides them
	if n, _ := strconv.Atoi(c.Run(t, "rpm -q gpg-pubkey | sort -u | wc -l")); n < len(want)+1 {
		t.Errorf("%d keys imported, want at least the %d built-in ones and the image's own", n, len(want))
	}
}

func keysOf(m map[string]any) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}
