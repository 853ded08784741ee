package faults

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/buildtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
)

// TestNoSecretOnDiskMidBuild freezes the VM's dnf mid-transaction (when
// the repositories' credentials are in use) and scans the VM's disk, the
// overlay upper directory that becomes the image, for every lab secret:
// none may be there. On a real cloud a credential written to the disk
// even briefly stays in the freed blocks the snapshot copies; the lab's
// image files carry no freed blocks (docs/lab.md), so the disk is scanned
// while the build runs. The secret must be on the VM's tmpfs meanwhile
// (else the scan proves nothing); then the build resumes and must
// succeed.
func TestNoSecretOnDiskMidBuild(t *testing.T) {
	labtest.Require(t)
	name := uniqueName("tmpfs")
	b := startBuild(t, "fat", nil, "-var", "image_name="+name)
	dnf := freezeDNF(t, b)
	stopped := true
	defer func() {
		if stopped {
			syscall.Kill(dnf, syscall.SIGCONT) // the build is not left frozen
		}
	}()

	upper := vmDiskUpper(t, dnf)
	n := buildtest.RequireNoSecretsInTree(t, theLab, upper, minBuilderImageFiles)
	// the control: dnf reads the Ark password from the tmpfs meanwhile
	onTmpfs := secretFilesUnder(t, filepath.Join("/proc", strconv.Itoa(dnf), "root", "run"), []byte(theLab.ArkPassword))
	if len(onTmpfs) == 0 {
		t.Fatal("the Ark password is nowhere under the VM's /run while dnf runs: the scan of the disk proves nothing")
	}
	t.Logf("dnf frozen: %d files of the disk (%s) scanned, no secret; the Ark password is in %v on the VM's tmpfs", n, upper, onTmpfs)

	if err := syscall.Kill(dnf, syscall.SIGCONT); err != nil {
		t.Fatalf("resuming the VM's dnf: %v", err)
	}
	stopped = false
	r := b.Proc.Wait(t, 8*time.Minute)
	if r.ExitCode != 0 {
		t.Fatalf("packer build failed after dnf resumed:\n%s", r.Output())
	}
	img := findImage(t, name)
	labtest.RequireClean(t, theLab)
	auditBuild(t, b, r)
	buildtest.RequireNoSecretsInTree(t, theLab, buildtest.ImageFiles(t, theLab, img.ID), minFatImageFiles)
}

// vmDiskUpper is the host path of the overlay upper directory of the root
// file system of process pid (a VM's): everything the VM wrote to its
// disk, and nothing of its tmpfs mounts.
func vmDiskUpper(t *testing.T, pid int) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "mountinfo"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(raw), "\n") {
		// id parent major:minor root mountpoint options ... - fstype source superoptions
		pre, post, ok := strings.Cut(l, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || f[4] != "/" || len(g) < 3 || g[0] != "overlay" {
			continue
		}
		for _, o := range strings.Split(g[2], ",") {
			if u, ok := strings.CutPrefix(o, "upperdir="); ok {
				if fi, err := os.Stat(u); err != nil || !fi.IsDir() {
					t.Fatalf("the VM's upper directory %s: %v", u, err)
				}
				return u
			}
		}
	}
	t.Fatalf("no overlay root with an upperdir in the mounts of VM process %d:\n%s", pid, raw)
	return ""
}

// secretFilesUnder lists the regular files under root holding secret.
func secretFilesUnder(t *testing.T, root string, secret []byte) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil // sockets, vanished files: not what we look for
		}
		if data, err := os.ReadFile(p); err == nil && bytes.Contains(data, secret) {
			found = append(found, strings.TrimPrefix(p, root))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}
