package gitserver

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
)

// TestLustreStandInBuildsClientRPMs does on a clone of lustre-release at
// 2.15.8 what the appliance's lustre role does on the build VM (sh
// ./autogen.sh, ./configure with the role's options, make rpms) and
// checks the RPMs its find globs pick up: kmod-lustre-client and
// lustre-client 2.15.8, x86_64, with the module under the running
// kernel's /lib/modules and lfs of the version. configure refuses a server
// build and a --with-linux without the running kernel's sources.
func TestLustreStandInBuildsClientRPMs(t *testing.T) {
	needs.Tools(t, "git", "rpmbuild", "rpm", "rpm2archive", "tar", "make")
	s, err := Start(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	src := filepath.Join(t.TempDir(), "lustre-release")
	must(t, "", "git", "clone", "-q", "--branch", "2.15.8", s.RepoURL("lustre/lustre-release"), src)
	if _, err := os.Stat(filepath.Join(src, "configure")); err == nil {
		t.Fatal("the tree has a configure before autogen.sh")
	}
	must(t, src, "sh", "./autogen.sh")

	// the sources of the running kernel and of another one, as a VM with
	// doca's kernel-devel and the role's has them
	running := must(t, "", "uname", "-r")
	kernels := t.TempDir()
	for _, k := range []string{"5.14.0-570.58.1.el9_6.x86_64", running} {
		if err := os.MkdirAll(filepath.Join(kernels, k), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(kernels, k, "Makefile"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opts := []string{"--with-linux=" + kernels + "/*", "--with-o2ib=/usr/src/ofa_kernel/default",
		"--disable-maintainer-mode", "--disable-gss-keyring", "--enable-mpitests=no"}
	// a server build; no sources of the running kernel
	for _, args := range [][]string{opts, append([]string{"--disable-server", "--with-linux=" + kernels + "/5.14*"}, opts[1:]...)} {
		if _, err := run("./configure", src, testEnv(src), args...); err == nil || !strings.Contains(err.Error(), "configure: error:") {
			t.Errorf("configure %v succeeded or said no error: %v", args, err)
		}
	}
	must(t, src, "./configure", append([]string{"--disable-server"}, opts...)...)
	must(t, src, "make", "rpms")

	var rpms []string
	for _, glob := range []string{"kmod-lustre-client-2*", "lustre-client-2*"} { // the role's lustre_rpm_globs
		m, _ := filepath.Glob(filepath.Join(src, glob))
		rpms = append(rpms, m...)
	}
	var got []string
	for _, r := range rpms {
		got = append(got, must(t, "", "rpm", "-qp", "--qf", "%{NAME}-%{VERSION} %{ARCH}", r))
		got = append(got, strings.Fields(must(t, "", "rpm", "-qlp", r))...)
	}
	want := []string{"kmod-lustre-client-2.15.8 x86_64", "/lib/modules/" + running + "/extra/lustre-client", "/lib/modules/" + running + "/extra/lustre-client/fs",
		"/lib/modules/" + running + "/extra/lustre-client/fs/lustre.ko", "lustre-client-2.15.8 x86_64", "/usr/bin/lfs", "/usr/sbin/mount.lustre"}
	if !slices.Equal(got, want) {
		t.Errorf("the RPMs make rpms left:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// lfs, unpacked from lustre-client, says the version
	root := t.TempDir()
	must(t, root, "sh", "-c", `rpm2archive - < "$1" | tar -xzf -`, "sh", rpms[len(rpms)-1])
	if out := must(t, "", filepath.Join(root, "usr/bin/lfs"), "--version"); out != "lfs 2.15.8" {
		t.Errorf("lfs --version: %q", out)
	}
}

// must runs name in dir as run does, with the test's git configuration,
// and stops t on failure.
func must(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	out, err := run(name, dir, testEnv(dir), args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func testEnv(dir string) []string {
	return append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+dir)
}
