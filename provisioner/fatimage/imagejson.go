package fatimage

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
)

// The appliance's image.json keys (ansible/cleanup.yml) and their value
// rules, so tooling that reads the appliance's images reads ours:
//   - branch, commit: `git rev-parse --abbrev-ref HEAD` / `HEAD` of the
//     controller's checkout; "-" here when that is no git work tree
//     (the appliance would fail instead);
//   - build: first label of the VM's nodename;
//   - os: "<distribution> <version>" as Ansible names them ("Rocky 9.6");
//   - kernel: `uname -r` of the kernel the image boots (Ansible's
//     ansible_kernel after the appliance's reboot): the newest installed
//     kernel when a kernel update's reboot was left to the first boot;
//   - ofed, doca, cuda, slurm-ohpc: the VERSION of mlnx-ofa_kernel,
//     doca-ofed, cuda-toolkit, slurm-ohpc, or "-" when not installed.
func applianceKeys(info *imageInfo, facts map[string]string, gitDir string) {
	info.Build, _, _ = strings.Cut(facts["nodename"], ".")
	if k := strings.TrimSpace(facts["kernel_boot"]); k != "" {
		info.Kernel = k
	}
	info.OS = strings.TrimSpace(ansibleDistribution(facts["os_id"], facts["os"]) + " " + facts["os_version"])
	orDash := func(v string) string {
		if v = strings.TrimSpace(v); v == "" {
			return "-"
		}
		return v
	}
	info.OFED = orDash(facts["pkgversion.mlnx-ofa_kernel"])
	info.DOCA = orDash(facts["pkgversion.doca-ofed"])
	info.CUDA = orDash(facts["pkgversion.cuda-toolkit"])
	info.SlurmOHPC = orDash(facts["pkgversion.slurm-ohpc"])
	info.Branch = orDash(gitOutput(gitDir, "rev-parse", "--abbrev-ref", "HEAD"))
	info.Commit = orDash(gitOutput(gitDir, "rev-parse", "HEAD"))
	info.Build = orDash(info.Build)
}

// ansibleDistribution is Ansible's ansible_distribution for an
// /etc/os-release ID (the RHEL family the appliance supports); other IDs
// fall back to the first word of the pretty name.
func ansibleDistribution(id, pretty string) string {
	switch id {
	case "rocky":
		return "Rocky"
	case "almalinux":
		return "AlmaLinux"
	case "rhel":
		return "RedHat"
	case "centos":
		return "CentOS"
	case "ol":
		return "OracleLinux"
	}
	if f := strings.Fields(pretty); len(f) > 0 {
		return f[0]
	}
	return id
}

// hostGitDir is where the appliance checkout is taken to be: the
// directory of the first inventory file when `inventory` is set (it
// lives in the appliance's environments/), else Packer's working
// directory, the appliance's own rule (its controller runs in the checkout).
func hostGitDir(c *Config) string {
	if c.ApplianceDir != "" {
		return c.ApplianceDir
	}
	if len(c.Inventory) > 0 {
		return filepath.Dir(c.Inventory[0])
	}
	return "."
}

// gitOutput runs git on the build host; "" when git or the work tree is
// missing.
func gitOutput(dir string, args ...string) string {
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// niceJSON is Ansible's to_nice_json: keys sorted, 4-space indent.
func niceJSON(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	out, err := json.MarshalIndent(m, "", "    ")
	return append(out, '\n'), err
}
