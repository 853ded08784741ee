package appliance_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
)

// TestReadTaskPackages: the checkout's vnc_compute.yml gives its dnf
// tasks' lists as written (not the removal's); package tasks in blocks
// and a comma-separated name count; a role the site lacks is recorded missing, a missing file
// or free-form arguments are the file's error, and a path that leaves the
// role's tasks/ is refused.
func TestReadTaskPackages(t *testing.T) {
	s := appliancesite.New(t, ".stackhpc", "fatimage")
	tp, missing, err := s.ReadTaskPackages(appliance.TaskRef{Role: "openondemand", File: "vnc_compute.yml"})
	if err != nil || len(missing) != 0 || tp.Error != "" {
		t.Fatal(tp, missing, err)
	}
	if want := [][]string{{"turbovnc-3.0.1", "nmap-ncat", "python3.9", "dbus-x11"}, {"@Xfce"}}; !reflect.DeepEqual(tp.Lists, want) {
		t.Errorf("vnc_compute.yml: %v, want %v", tp.Lists, want)
	}
	if !strings.HasSuffix(tp.Path, "/ansible/roles/openondemand/tasks/vnc_compute.yml") {
		t.Errorf("path %s", tp.Path)
	}

	roles := t.TempDir()
	s.RolesPath = append(s.RolesPath, roles)
	files := map[string]string{
		"ok.yml": "- name: first\n  ansible.builtin.dnf:\n    name: [a-1.0, b]\n" +
			"- block:\n    - name: inner\n      yum:\n        name: c, d\n  rescue:\n    - package: {name: e}\n    - dnf: {name: f, state: absent}\n- name: other\n  ansible.builtin.copy: {src: x, dest: y}\n",
		"freeform.yml": "- name: old style\n  dnf: name=a state=present\n",
	}
	must(t, os.MkdirAll(filepath.Join(roles, "site_pkgs", "tasks"), 0o755))
	for name, text := range files {
		must(t, os.WriteFile(filepath.Join(roles, "site_pkgs", "tasks", name), []byte(text), 0o644))
	}
	tp, _, err = s.ReadTaskPackages(appliance.TaskRef{Role: "site_pkgs", File: "ok.yml"})
	if want := [][]string{{"a-1.0", "b"}, {"c", "d"}, {"e"}}; err != nil || tp.Error != "" || !reflect.DeepEqual(tp.Lists, want) {
		t.Errorf("blocks and names: %+v %v, want %v", tp, err, want)
	}
	for file, want := range map[string]string{"freeform.yml": `task "old style": dnf's arguments are not a mapping`, "none.yml": "no such file"} {
		if tp, _, err := s.ReadTaskPackages(appliance.TaskRef{Role: "site_pkgs", File: file}); err != nil || !strings.Contains(tp.Error, want) {
			t.Errorf("%s: %+v %v, want the error %q", file, tp, err, want)
		}
	}
	_, missing, err = s.ReadTaskPackages(appliance.TaskRef{Role: "no_such_role", File: "main.yml"})
	if err != nil || !strings.Contains(missing["no_such_role"], roles) {
		t.Errorf("a missing role: %v %v", missing, err)
	}
	for _, ref := range []appliance.TaskRef{{Role: "site_pkgs", File: "../tasks/ok.yml"}, {Role: "../site_pkgs", File: "ok.yml"}, {Role: "ns.coll.role", File: "main.yml"}} {
		if _, _, err := s.ReadTaskPackages(ref); err == nil {
			t.Errorf("%v: no error", ref)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
