package system

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
)

func TestFiles(t *testing.T) {
	var got []string
	for _, f := range Files(
		[]SystemdUnit{{Name: "mysql.service", Content: "[Unit]", DropIns: map[string]string{"b": "B", "a": "A\n"}}},
		[]Sysctl{{Name: "90-x", Settings: map[string]string{"vm.b": "2", "vm.a": "1"}}},
		[]ModprobeBlacklist{{Name: "appliance", Modules: []string{"esp4", "rxrpc"}}},
		[]ConfigFile{{Name: "t", Content: "d /run/x"}},
		[]ConfigFile{{Name: "l", Content: "* soft nofile 1"}},
	) {
		got = append(got, f.Path+"|"+f.Content)
	}
	want := []string{
		"/etc/systemd/system/mysql.service|[Unit]\n",
		"/etc/systemd/system/mysql.service.d/a.conf|A\n",
		"/etc/systemd/system/mysql.service.d/b.conf|B\n",
		"/etc/sysctl.d/90-x.conf|# written by packer-plugin-fatimage\nvm.a = 1\nvm.b = 2\n",
		"/etc/modprobe.d/appliance.conf|# written by packer-plugin-fatimage: these modules never load\ninstall esp4 /bin/false\ninstall rxrpc /bin/false\n",
		"/etc/tmpfiles.d/t.conf|d /run/x\n",
		"/etc/security/limits.d/l.conf|* soft nofile 1\n",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("files:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// calls renders a script's calls and staged files for comparison.
func calls(sc content.Script) string {
	var b strings.Builder
	for _, f := range sc.Staged {
		fmt.Fprintf(&b, "staged %s %q\n", f.Name, f.Data)
	}
	for _, c := range sc.Calls {
		fmt.Fprintf(&b, "%s\n", strings.Join(c, "|"))
	}
	return b.String()
}

// Only the units' files reload systemd; each unit's state is set after
// its files are written; staged names are unique across kinds.
func TestInstall(t *testing.T) {
	env := content.Env{WorkDir: "/w"}
	units, _ := Units{}.Install(env, []SystemdUnit{{Name: "a.service", Content: "[Unit]"}, {Name: "b.service", State: "masked"}})
	sysctl, _ := Sysctls{}.Install(env, []Sysctl{{Name: "90-x", Settings: map[string]string{"vm.a": "1"}}})
	limits, _ := Limits.Install(env, []ConfigFile{{Name: "l", Content: "x"}})
	kargs, _ := KernelArgs{}.Install(env, []string{"rd.auto=1", "quiet"})
	got := calls(units) + calls(sysctl) + calls(limits) + calls(kargs)
	want := `staged systemd_units-0 "[Unit]\n"
fatimage_put_files|1|/w/systemd_units-0|/etc/systemd/system/a.service
fatimage_unit_state|a.service|disabled
fatimage_unit_state|b.service|masked
staged sysctl-0 "# written by packer-plugin-fatimage\nvm.a = 1\n"
fatimage_put_files|0|/w/sysctl-0|/etc/sysctl.d/90-x.conf
staged limits-0 "x\n"
fatimage_put_files|0|/w/limits-0|/etc/security/limits.d/l.conf
fatimage_kernel_args|rd.auto=1|quiet
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if strings.Join(kargs.Bodies, " ") != "kernel" {
		t.Errorf("kernel_args bodies %v", kargs.Bodies)
	}
	// a unit without files writes nothing: no put, only its state
	if sc, _ := (Units{}).Install(env, []SystemdUnit{{Name: "c.service", State: "enabled"}}); calls(sc) != "fatimage_unit_state|c.service|enabled\n" {
		t.Errorf("unit without files: %s", calls(sc))
	}
}

// Each kind's ID is what the merge replaces by.
func TestIDs(t *testing.T) {
	for _, tc := range [][2]string{
		{Units{}.ID(SystemdUnit{Name: "a.service"}), "a.service"},
		{Sysctls{}.ID(Sysctl{Name: "90-x"}), "90-x"},
		{Modprobe{}.ID(ModprobeBlacklist{Name: "m"}), "m"},
		{Tmpfiles.ID(ConfigFile{Name: "t"}), "t"},
		{KernelArgs{}.ID("rd.auto=1"), "rd.auto"},
		{KernelArgs{}.ID("quiet"), "quiet"},
	} {
		if tc[0] != tc[1] {
			t.Errorf("ID %q, want %q", tc[0], tc[1])
		}
	}
}
