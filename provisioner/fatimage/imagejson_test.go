package fatimage

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

func TestApplianceImageJSONKeys(t *testing.T) {
	facts := map[string]string{
		"os": "Rocky Linux 9.6 (Blue Onyx)", "os_id": "rocky", "os_version": "9.6",
		"kernel": "5.14.0-570.el9.x86_64", "nodename": "rl9-fat-2611.novalocal",
		"pkgversion.slurm-ohpc": "24.11.5", "pkgversion.cuda-toolkit": " ",
	}
	// a git checkout standing for the appliance's
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "feat/x"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	head, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	info := imageInfo{OSName: facts["os"], Kernel: facts["kernel"]}
	applianceKeys(&info, facts, dir)
	data, err := niceJSON(info)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"branch": "feat/x", "commit": strings.TrimSpace(string(head)), "build": "rl9-fat-2611",
		"os": "Rocky 9.6", "kernel": "5.14.0-570.el9.x86_64",
		"ofed": "-", "doca": "-", "cuda": "-", "slurm-ohpc": "24.11.5",
		"os_name": "Rocky Linux 9.6 (Blue Onyx)",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %q", k, got[k], v)
		}
	}
	// to_nice_json: keys sorted, 4-space indent, final newline
	s := string(data)
	if !strings.HasPrefix(s, "{\n    \"binaries\"") && !strings.HasPrefix(s, "{\n    \"branch\"") {
		t.Errorf("not sorted or not 4-space indented:\n%s", s)
	}
	if strings.Index(s, `"branch"`) > strings.Index(s, `"build"`) || strings.Index(s, `"os"`) > strings.Index(s, `"slurm-ohpc"`) || !strings.HasSuffix(s, "}\n") {
		t.Errorf("keys not sorted:\n%s", s)
	}
	// outside a git work tree branch and commit are "-"
	var outside imageInfo
	applianceKeys(&outside, map[string]string{"os_id": "almalinux", "os": "AlmaLinux 9.6", "os_version": "9.6"}, t.TempDir())
	if outside.Branch != "-" || outside.Commit != "-" || outside.Build != "-" || outside.OS != "AlmaLinux 9.6" {
		t.Errorf("outside a checkout: %+v", outside)
	}
}

// kernel names the kernel the image boots: a kernel update whose reboot
// the build left to the first boot is the image's kernel, as it is the
// appliance's after its reboot; otherwise the running one.
func TestApplianceImageJSONKernel(t *testing.T) {
	for _, tc := range []struct{ running, boot, want string }{
		{"5.14.0-503.el9.x86_64", "5.14.0-570.el9.x86_64", "5.14.0-570.el9.x86_64"},
		{"5.14.0-570.el9.x86_64", "5.14.0-570.el9.x86_64", "5.14.0-570.el9.x86_64"},
		{"6.1.0-lab", "", "6.1.0-lab"},
	} {
		info := imageInfo{Kernel: tc.running}
		applianceKeys(&info, map[string]string{"kernel": tc.running, "kernel_boot": tc.boot}, t.TempDir())
		if info.Kernel != tc.want {
			t.Errorf("running %s, boot %q: kernel %s, want %s", tc.running, tc.boot, info.Kernel, tc.want)
		}
	}
}
