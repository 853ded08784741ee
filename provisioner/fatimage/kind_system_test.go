package fatimage

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSystemValidation(t *testing.T) {
	runPrepareCases(t, []prepareCase{
		{"ok", map[string]any{
			"systemd_units":      []map[string]any{{"name": "mysql.service", "content": "[Unit]\n", "drop_ins": map[string]string{"slurm_app": "# x"}}, {"name": "firewalld.service", "state": "masked"}},
			"sysctl":             []map[string]any{{"name": "90-opensearch", "settings": map[string]string{"vm.max_map_count": "262144"}}},
			"modprobe_blacklist": []map[string]any{{"name": "appliance", "modules": []string{"esp4", "rxrpc"}}},
			"tmpfiles":           []map[string]any{{"name": "podman", "content": "d /run/podman 0755 podman podman -"}},
			"limits":             []map[string]any{{"name": "custom", "content": "podman soft nofile 65536"}},
		}, ""},
		{"unit suffix", map[string]any{"systemd_units": []map[string]any{{"name": "mysql"}}}, `systemd_units[0]: name "mysql" must be a unit name with its suffix, e.g. mysql.service`},
		{"unit dup", map[string]any{"systemd_units": []map[string]any{{"name": "a.service"}, {"name": "a.service"}}}, "systemd_units[1]: duplicate unit a.service"},
		{"unit state", map[string]any{"systemd_units": []map[string]any{{"name": "a.service", "state": "started"}}}, `systemd_units[0] (a.service): state "started" is not one of enabled, disabled, masked`},
		{"mask with content", map[string]any{"systemd_units": []map[string]any{{"name": "a.service", "state": "masked", "content": "[Unit]"}}}, "systemd_units[0] (a.service): state masked with content: systemd cannot mask a unit whose file is in /etc/systemd/system"},
		{"dropin name", map[string]any{"systemd_units": []map[string]any{{"name": "a.service", "drop_ins": map[string]string{"../x": "y"}}}}, `systemd_units[0] (a.service): drop-in name "../x" must be a plain file name without .conf`},
		{"sysctl empty", map[string]any{"sysctl": []map[string]any{{"name": "a"}}}, "sysctl[0]: settings must not be empty"},
		{"sysctl key", map[string]any{"sysctl": []map[string]any{{"name": "a", "settings": map[string]string{"VM Max": "1"}}}}, `sysctl[0]: key "VM Max" is not a sysctl name like vm.max_map_count`},
		{"sysctl value", map[string]any{"sysctl": []map[string]any{{"name": "a", "settings": map[string]string{"vm.x": "1\n2"}}}}, "sysctl[0]: value of vm.x must be one non-empty line"},
		{"sysctl name", map[string]any{"sysctl": []map[string]any{{"name": "a.conf", "settings": map[string]string{"vm.x": "1"}}}}, `sysctl[0]: name "a.conf" must be a plain file name without .conf`},
		{"sysctl dup", map[string]any{"sysctl": []map[string]any{{"name": "a", "settings": map[string]string{"vm.x": "1"}}, {"name": "a", "settings": map[string]string{"vm.y": "1"}}}}, `sysctl[1]: duplicate name "a"`},
		{"modprobe module", map[string]any{"modprobe_blacklist": []map[string]any{{"name": "a", "modules": []string{"esp4 /bin/true"}}}}, `modprobe_blacklist[0]: "esp4 /bin/true" is not a kernel module name`},
		{"modprobe empty", map[string]any{"modprobe_blacklist": []map[string]any{{"name": "a"}}}, "modprobe_blacklist[0]: modules must not be empty"},
		{"tmpfiles empty", map[string]any{"tmpfiles": []map[string]any{{"name": "a", "content": " "}}}, "tmpfiles[0]: content must not be empty"},
		{"kernel arg spaces", map[string]any{"kernel_args": []string{"rd.auto=1 quiet"}}, `kernel_args[0]: "rd.auto=1 quiet" must be one argument like rd.auto=1 (no spaces or quotes)`},
		{"kernel arg quote", map[string]any{"kernel_args": []string{`a="b"`}}, `kernel_args[0]: "a=\"b\"" must be one argument`},
		{"kernel arg ok", map[string]any{"kernel_args": []string{"rd.auto=1", "crashkernel=1G-4G:192M,4G-64G:256M"}}, ""},
		{"limits name", map[string]any{"limits": []map[string]any{{"name": "/etc/x", "content": "x"}}}, `limits[0]: name "/etc/x" must be a plain file name without .conf`},
	})
}

// TestSystemPutScript: a file is written once, then left alone.
func TestSystemPutScript(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("writes root-owned files")
	}
	work, dst := t.TempDir(), filepath.Join(t.TempDir(), "etc", "sysctl.d", "x.conf")
	for round, want := range []string{"wrote ", "unchanged "} {
		if err := os.WriteFile(filepath.Join(work, "s"), []byte("vm.x = 1\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		sc := newScript("kind-systemd_units").set("SRC", filepath.Join(work, "s")).set("DST", dst)
		out, err := runLocal(t, work, withText(sc, "changed=0\nfatimage_put \"$SRC\" \"$DST\" || changed=1\necho changed=$changed\n"))
		wantChanged := []string{"changed=1", "changed=0"}[round]
		if err != nil || !strings.Contains(out, want+dst) || !strings.Contains(out, wantChanged) {
			t.Fatalf("round %d: %v\n%s", round, err, out)
		}
	}
	if st, err := os.Stat(dst); err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("%v %v", st, err)
	}
}

// TestSystemPutFilesReload: systemd reloads after a file changed, only
// when units are configured, and not when nothing changed.
func TestSystemPutFilesReload(t *testing.T) {
	changed := map[string]string{"cmp": "exit 1", "install": "", "systemctl": ""}
	same := map[string]string{"cmp": "", "stat": "echo root:root:644", "systemctl": ""}
	for _, tc := range []struct {
		reload string
		fakes  map[string]string
		want   []string
	}{
		{"1", changed, []string{"cmp|-s|a|/etc/a.conf", "install|-D|-o|root|-g|root|-m|0644|a|/etc/a.conf", "systemctl|daemon-reload"}},
		{"0", changed, []string{"cmp|-s|a|/etc/a.conf", "install|-D|-o|root|-g|root|-m|0644|a|/etc/a.conf"}},
		{"1", same, []string{"cmp|-s|a|/etc/a.conf", "stat|-c|%U:%G:%a|/etc/a.conf"}},
	} {
		out, calls, err := runFaked(t, newScript("kind-systemd_units").call("fatimage_put_files", tc.reload, "a", "/etc/a.conf"), tc.fakes)
		if err != nil {
			t.Fatal(err, out)
		}
		wantCalls(t, calls, tc.want)
	}
}

// TestSystemPutFailedWriteFails: a file that cannot be written fails the
// step naming it, though the caller's `|| changed=1` turns errexit off.
func TestSystemPutFailedWriteFails(t *testing.T) {
	fakes := map[string]string{"cmp": "exit 1", "install": "exit 1", "systemctl": ""}
	out, calls, err := runFaked(t, newScript("kind-systemd_units").call("fatimage_put_files", "1", "a", "/etc/a.conf"), fakes)
	if err == nil || !strings.Contains(out, "system: cannot write /etc/a.conf") || strings.Contains(out, "wrote /etc/a.conf") {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, c := range calls {
		if strings.HasPrefix(c, "systemctl") {
			t.Fatalf("systemd reloaded after a failed write: %v", calls)
		}
	}
}
