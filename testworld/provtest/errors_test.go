package provtest

import (
	"strings"
	"testing"
	"time"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"

	"github.com/stackhpc/packer-plugin-fatimage/provisioner/fatimage"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/repos"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/logtail"
)

// Failures provoked for real on one VM: each error's first line names
// the cause (the field to fix, the repository or the packages).
func TestProvisionLabErrorHeadlines(t *testing.T) {
	ctx, _, comm := labVM(t, "fatimage-errors", 10*time.Minute)
	user, password := theLab.Env["ARK_USERNAME"], theLab.Env["ARK_PASSWORD"]
	rockyKey := []any{map[string]any{"path": "/etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9", "key": string(theLab.Repos.GPGKeyFiles["RPM-GPG-KEY-Rocky-9"])}}
	labRepo := func(name string) map[string]any {
		for _, r := range labRepos(t) {
			if m := r.(map[string]any); m["name"] == name {
				return m
			}
		}
		t.Fatalf("no lab repository %s", name)
		return nil
	}
	var ids []string
	for _, r := range labRepos(t) {
		ids = append(ids, r.(map[string]any)["repo_name"].(string))
	}
	baseos := labRepo("baseos")
	missing := map[string]any{}
	for k, v := range baseos {
		missing[k] = v
	}
	missing["baseurl"] = strings.Replace(baseos["baseurl"].(string), repos.NewerTimestamp, "20000101T000000", 1)
	nodeExporterURL := strings.TrimRight(theLab.Env["LAB_RELEASES_URL"], "/") + "/node_exporter/releases/download/v1.11.1/node_exporter-1.11.1.linux-amd64.tar.gz"

	cases := []struct {
		name     string
		password string
		raw      map[string]any
		want     string // the error's first line
		then     string // the start of its second line
	}{
		// first, while the lab's key is not imported on the fresh VM (the
		// lab signs every repository with the key it puts at
		// RPM-GPG-KEY-Rocky-9, so the image's own key is not imported
		// here); the built-in keys of the lab's EPEL, OpenHPC, ... are, and
		// none of them signed: dnf names the package, the headline its
		// repository
		{"signed without key", password, map[string]any{"repos": labRepos(t), "import_os_key": false, "packages": []string{"ohpc-filesystem"}},
			`repository "OpenHPC": packages are signed (gpgcheck = 1) but no key for it is installed: add its key to gpg_keys`,
			"fatimage packages: dnf -y --setopt=max_parallel_downloads=10 --setopt=max_downloads_per_mirror=10 --setopt=install_weak_deps=true shell "},
		{"checksum", password, map[string]any{"binaries": []any{map[string]any{"name": "node_exporter", "sha256": strings.Repeat("0", 64)}},
			"release_base_url": theLab.Env["LAB_RELEASES_URL"]},
			"binaries: node_exporter 1.11.1: sha256 mismatch: want " + strings.Repeat("0", 64) + ", got " + theLab.BinaryChecksums()["node_exporter"] + " (" + nodeExporterURL + "); nothing installed",
			"fatimage binaries-fetch: sudo -n sh -eu /var/tmp/fatimage-"},
		{"no match", password, map[string]any{"repos": labRepos(t), "gpg_keys": rockyKey, "packages": []string{"no-such-package-xyz", "htop-nope"}},
			"packages: no match for no-such-package-xyz, htop-nope in the configured repositories (" + strings.Join(ids, ", ") + ")",
			"fatimage packages: dnf -y --setopt=max_parallel_downloads=10 --setopt=max_downloads_per_mirror=10 --setopt=install_weak_deps=true shell "},
		// the transaction's first dnf command loads the metadata: it fails
		// there, before any package changes
		{"missing snapshot", password, map[string]any{"repos": []any{missing}, "update": true},
			`repository "baseos": no repository at its baseurl (HTTP 404 for ` + missing["baseurl"].(string) + `/repodata/repomd.xml): check the baseurl and that the snapshot exists`,
			"fatimage packages: dnf -y --setopt=max_parallel_downloads=10 --setopt=max_downloads_per_mirror=10 --setopt=install_weak_deps=true shell "},
		{"wrong password", "not-the-lab-password", map[string]any{"repos": []any{baseos}, "update": true},
			`repository "baseos": the server refused access (HTTP 403 for ` + baseos["baseurl"].(string) + `/repodata/repomd.xml): check repo_username and repo_password (or ARK_USERNAME and ARK_PASSWORD) and that they may read this snapshot`,
			"fatimage packages: dnf -y --setopt=max_parallel_downloads=10 --setopt=max_downloads_per_mirror=10 --setopt=install_weak_deps=true shell "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("ARK_USERNAME", user)
			t.Setenv("ARK_PASSWORD", tc.password)
			raw := map[string]any{"update": false, "selinux": "unchanged", "reboot": "never", "move_login_home": false, "default_binaries": false}
			for k, v := range tc.raw {
				raw[k] = v
			}
			var p fatimage.Provisioner
			if err := p.Prepare(raw); err != nil {
				t.Fatal(err)
			}
			err := p.Provision(ctx, packersdk.TestUi(t), comm, nil)
			if err == nil {
				t.Fatal("no error")
			}
			t.Logf("error:\n%s", err)
			first, rest, _ := strings.Cut(err.Error(), "\n")
			if first != tc.want {
				t.Errorf("headline\n%s\nwant\n%s", first, tc.want)
			}
			if !strings.HasPrefix(rest, tc.then) {
				t.Errorf("second line %q, want %q", strings.SplitN(rest, "\n", 2)[0], tc.then)
			}
			if strings.Contains(err.Error(), password) {
				t.Error("the error carries the password")
			}
		})
	}
}

// The repositories' OS version is checked against the real VM's
// /etc/os-release in the first step: repositories said to be for Rocky
// 8.10 on the lab's 9.6 VM stop the build there, naming both, before any
// repository or package is touched. (A minor difference, such as the
// appliance's 9.8 against the lab's 9.6 stand-ins, is only a warning:
// unit-tested, as the lab has no 9.8 to build.)
func TestProvisionLabOSVersionMismatch(t *testing.T) {
	ctx, _, comm := labVM(t, "fatimage-osversion", 10*time.Minute)
	t.Setenv("ARK_USERNAME", theLab.Env["ARK_USERNAME"])
	t.Setenv("ARK_PASSWORD", theLab.Env["ARK_PASSWORD"])
	before := run(t, comm, "ls /etc/yum.repos.d")
	var rs []any
	for _, r := range labRepos(t) {
		m := map[string]any{}
		for k, v := range r.(map[string]any) {
			m[k] = v
		}
		m["os_version"] = "8.10"
		rs = append(rs, m)
	}
	var p fatimage.Provisioner
	if err := p.Prepare(map[string]any{"repos": rs, "update": false, "selinux": "unchanged", "reboot": "never", "move_login_home": false, "default_binaries": false}); err != nil {
		t.Fatal(err)
	}
	var out logtail.Buffer
	err := p.Provision(ctx, &packersdk.BasicUi{Writer: &out, ErrorWriter: &out}, comm, nil)
	want := "are for Rocky 8.10 (the fatimage-ark data source's os_version), but the build VM runs 9.6 (VERSION_ID in its /etc/os-release): use a Rocky 8 source image, or set os_version to the image's"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v\nwant an error with %q", err, want)
	}
	if strings.Contains(out.String(), "fatimage: repositories") || run(t, comm, "ls /etc/yum.repos.d") != before {
		t.Errorf("the build went on past the check:\n%s", out.String())
	}
}
