package inventory

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// layout is the checked-in appliance inventory layout, in the
// appliance's order common → site → environment.
var layout = []string{
	"../../testworld/appliance/environments/common/inventory",
	"../../testworld/appliance/environments/site/inventory",
	"../../testworld/appliance/environments/fatsite/inventory",
}

func load(t *testing.T, sources ...string) *Inventory {
	t.Helper()
	inv := New()
	if err := inv.Load(sources...); err != nil {
		t.Fatal(err)
	}
	return inv
}

func TestFatBuildGroups(t *testing.T) {
	got := load(t, layout...).HostGroups("default", "builder", "fatimage")
	// fatimage is a child of cluster and of every role, so the host is in
	// every feature group hanging off them, transitively (filebeat via
	// slurm_stats via control; podman via opensearch and filebeat;
	// site_monitoring via grafana from the environment layer).
	for _, g := range []string{"all", "builder", "fatimage", "cluster", "openhpc", "login", "control", "compute",
		"kernel_modules", "dnf_repos", "update", "mysql", "grafana", "filebeat", "podman", "systemd",
		"selinux", "openondemand", "openondemand_desktop", "site_monitoring", "gateway"} {
		if !slices.Contains(got, g) {
			t.Errorf("fat build host not in %s; groups %v", g, got)
		}
	}
	// groups left empty, and ungrouped (the host is in groups)
	for _, g := range []string{"doca", "cuda", "compute_init", "ungrouped"} {
		if slices.Contains(got, g) {
			t.Errorf("fat build host in %s", g)
		}
	}
	if !slices.IsSorted(got) {
		t.Errorf("not sorted: %v", got)
	}
}

func TestExtraBuildGroups(t *testing.T) {
	// The appliance's extra build: builder plus doca,cuda only.
	got := load(t, layout...).HostGroups("default", "builder", "doca", "cuda")
	want := []string{"all", "builder", "cuda", "dnf_repos", "doca", "kernel_modules"}
	if !slices.Equal(got, want) {
		t.Errorf("extra build groups %v, want %v", got, want)
	}
}

func TestLayering(t *testing.T) {
	// Without the environment layer, site_monitoring does not exist.
	got := load(t, layout[:2]...).HostGroups("default", "builder", "fatimage")
	if slices.Contains(got, "site_monitoring") {
		t.Errorf("site_monitoring without its layer: %v", got)
	}
	// Layers add, never replace: compute keeps fatimage as a child after
	// the environment gives it hosts.
	inv := load(t, layout...)
	if !slices.Contains(inv.children["compute"], "fatimage") || !slices.Contains(inv.hosts["compute"], "node-[0:3]") {
		t.Errorf("compute children %v hosts %v", inv.children["compute"], inv.hosts["compute"])
	}
	// [all:vars] defines no group of its own
	if inv.Defined("all:vars") || !inv.Defined("all") {
		t.Error("vars section handled as a group")
	}
}

func TestHostListedInSection(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "hosts", "[special]\ndefault ansible_host=1.2.3.4\n[outer:children]\nspecial\n")
	got := load(t, dir).HostGroups("default")
	if !slices.Equal(got, []string{"all", "outer", "special"}) {
		t.Errorf("got %v", got)
	}
	if got := New().HostGroups("lonely"); !slices.Equal(got, []string{"all", "ungrouped"}) {
		t.Errorf("host in no group: %v", got)
	}
}

func TestDirectorySkipsNonINI(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "groups", "[a:children]\nb\n")
	write(t, dir, "hosts.yml", "all:\n  children: {}\n")
	write(t, dir, "notes.md", "[x\n")
	write(t, dir, "group_vars/all.yml", "x: 1\n")
	got := load(t, dir).HostGroups("default", "b")
	if !slices.Equal(got, []string{"a", "all", "b"}) {
		t.Errorf("got %v", got)
	}
}

func TestRefusals(t *testing.T) {
	for name, text := range map[string]string{
		"loop":          "[a:children]\nb\n[b:children]\nc\n[c:children]\na\n",
		"self child":    "[a:children]\na\n",
		"bad kind":      "[a:kids]\nb\n",
		"open header":   "[a\n",
		"spaced group":  "[a b]\n",
		"a passwd file": "root:x:0:0:root:/root:/bin/bash\nbin:x:1:1:bin:/bin:/sbin/nologin\n",
		"variables":     "[a]\nx=1\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "groups", text)
			err := New().Load(filepath.Join(dir, "groups"))
			if err == nil {
				t.Fatal("accepted")
			}
			if name == "loop" && !strings.Contains(err.Error(), "a -> b -> c -> a") {
				t.Errorf("loop not named: %v", err)
			}
			if name == "a passwd file" && (!strings.Contains(err.Error(), ":1: not a host name, group or section header: not an Ansible INI inventory") || strings.Contains(err.Error(), "root:x")) {
				t.Errorf("passwd: %v", err)
			}
		})
	}
	if err := New().Load(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("missing source accepted")
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"grafana", "nfs", "openhpc", "sssd", "podman", "fatimage"}
	for in, want := range map[string]string{
		"grafanna": "grafana", "opnehpc": "openhpc", "fatimgae": "fatimage", "fatimge": "fatimage",
		"sssd": "", "sshd": "sssd", "site_monitoring": "", "nhc": "", "grafana": "",
		// short names: one edit, not two
		"nfx": "nfs", "ntp": "", "dns": "",
	} {
		if got := Suggest(in, known); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
