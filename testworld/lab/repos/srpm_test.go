package repos

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
)

// TestSourceBuiltSlurmRebuildsWithNVML builds the newer OpenHPC Slurm
// stand-ins from their source package, then does to the SRPM what the
// appliance's slurm_recompile role does on the build VM (rpm -i into
// $HOME/rpmbuild, rpmbuild -bb -D "_with_nvml ..." slurm.spec): the
// x86_64 packages it makes are the installed ones' names and EVR, and
// record the NVML option the original build did not have.
func TestSourceBuiltSlurmRebuildsWithNVML(t *testing.T) {
	needs.Tools(t, "rpmbuild", "rpm", "rpm2archive", "tar")
	var group []*artifact
	for _, g := range sourceGroups(artifacts()) {
		if g[0].def.SRPM == "slurm-ohpc" && g[0].vr() == "23.11.10-321.ohpc.3.2" {
			group = g
		}
	}
	if len(group) == 0 {
		t.Fatal("no source group for slurm-ohpc 23.11.10-321.ohpc.3.2")
	}
	dir, rpms := t.TempDir(), t.TempDir()
	if err := buildSource(dir, group, nil, rpms); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range group {
		if !a.src {
			names = append(names, a.def.Name)
		}
	}
	slurmd := filepath.Join(rpms, "slurm-slurmd-ohpc-23.11.10-321.ohpc.3.2.x86_64.rpm")
	if got := runIn(t, "", "rpm", "-qp", "--qf", "%{ARCH} %{SOURCERPM}", slurmd); got != "x86_64 slurm-ohpc-23.11.10-321.ohpc.3.2.src.rpm" {
		t.Errorf("slurm-slurmd-ohpc: arch and source %q", got)
	}
	main := filepath.Join(rpms, "slurm-ohpc-23.11.10-321.ohpc.3.2.x86_64.rpm")
	if got := fileIn(t, main, "/usr/share/slurm-ohpc/lab-configure"); got != "configure\n" {
		t.Errorf("the repository's slurm-ohpc records %q", got)
	}

	// what the role's dnf builddep installs: Slurm's build dependency
	srpm := filepath.Join(rpms, "slurm-ohpc-23.11.10-321.ohpc.3.2.src.rpm")
	if got := runIn(t, "", "rpm", "-qp", "--requires", srpm); !slices.Contains(strings.Split(got, "\n"), "munge-devel") {
		t.Errorf("the SRPM's build requirements %q lack munge-devel", got)
	}

	// as the role: rpm -i the SRPM, rpmbuild -bb with NVML in SPECS
	// (--nodeps: on the VM dnf builddep installed munge-devel first)
	home := t.TempDir()
	runIn(t, home, "rpm", "--dbpath", filepath.Join(home, "db"), "-i", srpm)
	nvml := "--with-nvml=/usr/local/cuda-13.4/targets/x86_64-linux/"
	runIn(t, home, "rpmbuild", "--quiet", "--nodeps", "-bb", "-D", "_with_nvml "+nvml, filepath.Join(home, "rpmbuild", "SPECS", "slurm.spec"))
	built, _ := filepath.Glob(filepath.Join(home, "rpmbuild", "RPMS", "x86_64", "*.rpm"))
	var got []string
	for _, f := range built {
		got = append(got, strings.TrimSuffix(filepath.Base(f), "-23.11.10-321.ohpc.3.2.x86_64.rpm"))
	}
	slices.Sort(got)
	slices.Sort(names)
	if !slices.Equal(got, names) {
		t.Errorf("the rebuild made %v, want %v", got, names)
	}
	rebuilt := filepath.Join(home, "rpmbuild", "RPMS", "x86_64", "slurm-ohpc-23.11.10-321.ohpc.3.2.x86_64.rpm")
	if got := fileIn(t, rebuilt, "/usr/share/slurm-ohpc/lab-configure"); got != "configure "+nvml+"\n" {
		t.Errorf("the rebuilt slurm-ohpc records %q", got)
	}
}

// runIn runs a command with HOME=home (when set) and returns its trimmed output.
func runIn(t *testing.T, home string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	if home != "" {
		cmd.Env = append(os.Environ(), "HOME="+home)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v: %s", name, args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// fileIn returns the content of path in the package rpm.
func fileIn(t *testing.T, rpm, path string) string {
	t.Helper()
	tgz := filepath.Join(t.TempDir(), "p.tgz")
	runIn(t, "", "sh", "-c", `rpm2archive - < "$1" > "$2"`, "sh", rpm, tgz)
	f, err := os.Open(tgz)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s has no %s: %v", rpm, path, err)
		}
		if strings.TrimPrefix(h.Name, ".") == path {
			data, _ := io.ReadAll(tr)
			return string(data)
		}
	}
}
