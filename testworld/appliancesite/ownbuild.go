package appliancesite

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"go.yaml.in/yaml/v3"
)

// LabRepo is one repository of the lab's Ark as the appliance's
// dnf_repos_default names it.
type LabRepo struct {
	Key, Major, PulpPath, Timestamp, RepoFile string
}

// ForOwnBuild makes s buildable by the appliance's own build
// (packer/openstack.pkr.hcl's way: ansible/fatimage.yml through the
// official ansible provisioner) against the lab, with only what a site
// changes in its own files or deploy host:
//   - labsite/ joins the environment: the lab's Ark user for the builder
//     group, and a pre hook pointing git, pip, (for podman hosts) podman
//     and (for grafana, openondemand, slurm_exporter, manila, hpctests and
//     the OOD rstudio and codeserver hosts) grafana.com, yum.osc.edu,
//     download.ceph.com, download2.rstudio.org, github.com and
//     www.netlib.org at the lab's mirrors, these names kept in /etc/hosts
//     by the etc_hosts role's etc_hosts_extra_hosts;
//   - cacerts/lab-ca.pem: the lab's CA (caPEM), which the appliance's
//     cacerts role makes the VM trust, as a site's own CA;
//   - group_vars/all/lab_ark.yml: dnf_repos_default with the lab's
//     snapshots (the appliance's pinned timestamps are not served here)
//     and appliances_pulp_url the lab's Ark, as a site with its own Pulp
//     sets it (the grafana role's repo file reads it directly);
//   - requirements.yml.last, as dev/setup-env.sh leaves it after installing
//     the Galaxy content (validate-galaxy.yml compares the two);
//   - the tree becomes a git work tree (a site's checkout is a clone:
//     cleanup.yml's image summary runs git rev-parse in the playbook's
//     directory, so ansible/ becomes a directory of links in the tree);
//   - group_vars/all/lab_releases.yml: node_exporter's, prometheus' and
//     alertmanager's <name>_binary_url at the lab's release downloads and
//     <name>_checksum the lab's tarball's (binarySHA256, by binary name),
//     as a site mirroring the releases sets them;
//   - ansible/roles is a copy of the checkout's roles with the Galaxy
//     roles beside them, where dev/setup-env.sh installs them:
//     fatimage.yml's grafana play reads
//     ansible/roles/cloudalchemy.grafana/vars/redhat.yml by that path,
//     and compute_init's install.yml rsyncs ../../stackhpc.nfs and other
//     roles from beside its own (links would arrive as links).
//
// Both of a comparison's builds use the result.
func ForOwnBuild(tb testing.TB, s *appliance.Site, repos []LabRepo, binarySHA256 map[string]string, caPEM []byte) {
	tb.Helper()
	_, file, _, _ := runtime.Caller(0)
	here := filepath.Dir(file)
	if out, err := exec.Command("cp", "-r", filepath.Join(here, "labsite")+"/.", s.Environment).CombinedOutput(); err != nil {
		tb.Fatalf("copying labsite into %s: %v: %s", s.Environment, err, out)
	}
	must(tb, os.MkdirAll(filepath.Join(s.Environment, "cacerts"), 0o755))
	must(tb, os.WriteFile(filepath.Join(s.Environment, "cacerts", "lab-ca.pem"), caPEM, 0o644))
	def := map[string]map[string]map[string]string{}
	for _, r := range repos {
		if def[r.Key] == nil {
			def[r.Key] = map[string]map[string]string{}
		}
		// keyed by major: the role takes the OS version's entry, else the major's
		def[r.Key][r.Major] = map[string]string{"pulp_path": r.PulpPath, "pulp_timestamp": r.Timestamp, "repo_file": r.RepoFile}
	}
	data, err := yaml.Marshal(map[string]any{
		"dnf_repos_default":   def,
		"appliances_pulp_url": "{{ lookup('ansible.builtin.env', 'ARK_CONTENT_URL') | regex_replace('/pulp/content/?$', '') }}",
	})
	must(tb, err)
	must(tb, os.WriteFile(filepath.Join(s.Environment, "inventory", "group_vars", "all", "lab_ark.yml"), append([]byte("---\n"), data...), 0o644))
	rel := map[string]string{}
	for _, name := range []string{"node_exporter", "prometheus", "alertmanager"} {
		rel[name+"_binary_url"] = fmt.Sprintf("{{ lookup('ansible.builtin.env', 'LAB_RELEASES_URL') }}/%[1]s/releases/download/v{{ %[1]s_version }}/%[1]s-{{ %[1]s_version }}.linux-amd64.tar.gz", name)
		rel[name+"_checksum"] = binarySHA256[name]
	}
	releases, err := yaml.Marshal(rel)
	must(tb, err)
	must(tb, os.WriteFile(filepath.Join(s.Environment, "inventory", "group_vars", "all", "lab_releases.yml"), append([]byte("---\n"), releases...), 0o644))
	req, err := os.ReadFile(filepath.Join(s.Repo, "requirements.yml"))
	must(tb, err)
	must(tb, os.WriteFile(filepath.Join(s.Repo, "requirements.yml.last"), req, 0o644))
	linkDir(tb, filepath.Join(s.Repo, "ansible"))
	copyRoles(tb, s)
	git := exec.Command("sh", "-c", "git init -q . && git -c user.name=site -c user.email=site@example.invalid commit -q --allow-empty -m site")
	git.Dir = s.Repo
	if out, err := git.CombinedOutput(); err != nil {
		tb.Fatalf("git init %s: %v: %s", s.Repo, err, out)
	}
}

// copyRoles makes s's ansible/roles a directory holding copies of the
// checkout's roles and the site's Galaxy roles, as `ansible-galaxy role
// install -p ansible/roles` leaves it.
func copyRoles(tb testing.TB, s *appliance.Site) {
	tb.Helper()
	roles := filepath.Join(s.Repo, "ansible", "roles")
	src, err := os.Readlink(roles)
	must(tb, err)
	must(tb, os.Remove(roles))
	for _, dir := range append([]string{src}, s.RolesPath...) {
		if out, err := exec.Command("cp", "-r", dir+"/.", roles).CombinedOutput(); err != nil {
			tb.Fatalf("copying the roles of %s into %s: %v: %s", dir, roles, err, out)
		}
	}
}
