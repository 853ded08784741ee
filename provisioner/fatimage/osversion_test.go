package fatimage

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
)

func TestOSReleaseVersion(t *testing.T) {
	for in, want := range map[string]string{
		"NAME=\"Rocky Linux\"\nVERSION=\"9.6 (Blue Onyx)\"\nID=\"rocky\"\nVERSION_ID=\"9.6\"\nPLATFORM_ID=\"platform:el9\"\n": "9.6",
		"ID=rocky\nVERSION_ID=8.10\n": "8.10",
		"NAME=\"lab image\"\n":        "",
	} {
		if got := osReleaseVersion(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

func TestCheckOSVersion(t *testing.T) {
	repos := []Repo{
		{Name: "baseos", OSVersion: "9.8"}, {Name: "epel", OSVersion: "9.8"},
		{Name: "doca"}, // a vendor repository given by hand says nothing
	}
	if _, err := checkOSVersion("8.10", repos); err == nil || err.Error() != "repos: the repositories (baseos, epel) are for Rocky 9.8 (the fatimage-ark data source's os_version), "+
		"but the build VM runs 8.10 (VERSION_ID in its /etc/os-release): use a Rocky 9 source image, or set os_version to the image's" {
		t.Errorf("another major: %v", err)
	}
	w, err := checkOSVersion("9.6", repos)
	if err != nil || len(w) != 1 || !strings.HasPrefix(w[0], "WARNING: the repositories (baseos, epel) are for Rocky 9.8, but the build VM runs 9.6 ") {
		t.Errorf("another minor: %q %v", w, err)
	}
	for _, ok := range []struct {
		vm    string
		repos []Repo
	}{
		{"9.8", repos},
		{"9.6", []Repo{{Name: "epel", OSVersion: "9"}}},
		{"8.10", []Repo{{Name: "baseos"}}},
	} {
		if w, err := checkOSVersion(ok.vm, ok.repos); err != nil || len(w) != 0 {
			t.Errorf("%s %+v: %q %v", ok.vm, ok.repos, w, err)
		}
	}
}

// osReleaseComm answers the first step's commands as a VM of VERSION_ID
// version, and records them.
type osReleaseComm struct {
	packersdk.Communicator
	version  string
	commands []string
}

func (c *osReleaseComm) Start(_ context.Context, cmd *packersdk.RemoteCmd) error {
	c.commands = append(c.commands, cmd.Command)
	out := ""
	switch cmd.Command {
	case "id -un":
		out = "rocky\n"
	case osReleaseCommand:
		out = "NAME=\"Rocky Linux\"\nID=\"rocky\"\nVERSION_ID=\"" + c.version + "\"\n"
	}
	go func() {
		_, _ = io.WriteString(cmd.Stdout, out) // a buffer: cannot fail
		cmd.SetExited(0)
	}()
	return nil
}

// The first step on the VM reads its os-release when the repositories
// carry an OS version (as the data source's do), and the build stops
// there on another major, naming both; without one it reads nothing.
func TestConnectChecksTheVMsOSVersion(t *testing.T) {
	clearArkEnv(t)
	for _, tc := range []struct {
		vm, repos string
		wantErr   string
		wantRead  bool
	}{
		{"9.6", "9.6", "", true},
		{"8.10", "9.6", "the repositories (baseos) are for Rocky 9.6 (the fatimage-ark data source's os_version), but the build VM runs 8.10", true},
		{"8.10", "", "", false},
	} {
		var p Provisioner
		repo := map[string]any{"name": "baseos", "repo_file": "rocky", "repo_name": "baseos", "baseurl": "https://ark.example/rocky/9.6/BaseOS/x86_64/os/20251106T211545/", "gpgcheck": true}
		if tc.repos != "" {
			repo["os_version"] = tc.repos
		}
		if err := p.Prepare(map[string]any{"repos": []map[string]any{repo}, "repo_username": "osv-user", "repo_password": "Osv-Pw-93k"}); err != nil {
			t.Fatal(err)
		}
		c := &osReleaseComm{version: tc.vm}
		s := &state{cfg: &p.config, plan: p.plan, ui: packersdk.TestUi(t), comm: c}
		err := stepConnect(t.Context(), s)
		if (tc.wantErr == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.wantErr) ||
			slices.Contains(c.commands, osReleaseCommand) != tc.wantRead || len(p.plan.repos[0].Options) != 0 {
			t.Errorf("VM %s, repos for %q: %v (commands %q, options %v)", tc.vm, tc.repos, err, c.commands, p.plan.repos[0].Options)
		}
	}
}

// The groups' per_major values: RL8's where the repositories' os_version
// says 8, or where the step connect finds an RL8 VM and nothing said the
// major before; RL9's (the data's) otherwise.
func TestGroupsPerMajor(t *testing.T) {
	clearArkEnv(t)
	for _, tc := range []struct {
		repos, vm, want string
	}{
		{"8.10", "", "8"},
		{"9.6", "", "9"},
		{"", "", ""},
		{"", "8.10", "8"},
		{"", "9.6", ""},
	} {
		var p Provisioner
		repo := map[string]any{"name": "baseos", "repo_file": "rocky", "repo_name": "baseos", "baseurl": "https://ark.example/rocky/BaseOS/", "gpgcheck": true}
		if tc.repos != "" {
			repo["os_version"] = tc.repos
		}
		if err := p.Prepare(map[string]any{"repos": []map[string]any{repo}, "repo_username": "maj-user", "repo_password": "Maj-Pw-41x",
			"groups": []string{"slurm_stats", "openondemand_rstudio"}}); err != nil {
			t.Fatal(err)
		}
		pl := p.plan
		if tc.vm != "" {
			s := &state{cfg: &p.config, plan: p.plan, replan: p.config.plan, ui: packersdk.TestUi(t), comm: &osReleaseComm{version: tc.vm}}
			if err := stepConnect(t.Context(), s); err != nil {
				t.Fatal(err)
			}
			pl = s.plan
		}
		interp, rhel := "python3", "/server/rhel9/"
		if tc.want == "8" {
			interp, rhel = "python3.9", "/server/rhel8/"
		}
		if pl.osMajor != tc.want || len(pl.PythonEnvs) != 1 || pl.PythonEnvs[0].Interpreter != interp ||
			len(pl.RPMURLs) != 1 || !strings.Contains(pl.RPMURLs[0].URL, rhel) || !slices.Contains(pl.sets.Packages, "el8:python39") {
			t.Errorf("repos %q, VM %q: major %q, python_envs %+v, rpm_urls %+v, packages %v", tc.repos, tc.vm, pl.osMajor, pl.PythonEnvs, pl.RPMURLs, pl.sets.Packages)
		}
	}
}
