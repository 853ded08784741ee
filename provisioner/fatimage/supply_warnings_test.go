package fatimage

import (
	"strings"
	"testing"
)

// TestSupplyChainWarnings: a repository without GPG checks, a plain-http
// package index and a git requirement (which turns pip's hash checking
// off for its environment) are each warned about (issue #26).
func TestSupplyChainWarnings(t *testing.T) {
	clearArkEnv(t)
	unsigned := goodRepo()
	unsigned["repo_name"], unsigned["gpgcheck"] = "eessi", false
	var p Provisioner
	err := p.Prepare(map[string]any{"repos": []any{goodRepo(), unsigned}, "repo_username": "u", "repo_password": "p", "python_index_insecure": true,
		"python_envs": []map[string]any{
			{"path": "/opt/a", "index_url": "http://mirror.example/simple", "requirements": []string{"a==1"}},
			{"path": "/opt/b", "requirements": []string{"tools @ git+https://h/t.git@v3.0", "a==1"}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(append(p.plan.repoWarnings(), p.plan.contentWarnings()...), "\n")
	for _, w := range []string{
		"python_envs[0]: the requirements of /opt/a carry no --hash: the pinned versions (recorded in image.json) are installed, their content not verified",
		"repos[1] (eessi): gpgcheck = false: the signatures of its packages are not verified",
		"python_envs[0]: index_url http://mirror.example/simple is plain http: pip trusts the host (--trusted-host)",
		"python_envs[1]: tools is a git requirement: pip verifies no hash in /opt/b",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("no warning %q in:\n%s", w, got)
		}
	}
	if strings.Contains(got, "repos[0]") || strings.Contains(got, "python_envs[1]: index_url") || strings.Contains(got, "/opt/b carry no --hash") {
		t.Errorf("a warning about what is checked:\n%s", got)
	}
}

// TestBuiltinUnverifiedSaidNotVerified: every built-in download without
// a checksum (k3s, helm, k9s, opkssh, rstudio-server, code-server) is
// said "not verified" when fetched.
func TestBuiltinUnverifiedSaidNotVerified(t *testing.T) {
	clearArkEnv(t)
	var p Provisioner
	if err := p.Prepare(map[string]any{"groups": []string{"k3s", "k9s", "opkssh", "openondemand_rstudio", "openondemand_codeserver"}}); err != nil {
		t.Fatal(err)
	}
	said := strings.Join(append(p.plan.contentWarnings(), kindFetchPlan(kindRPMs, &p.plan.ContentOptions).Warnings...), "\n")
	for _, name := range []string{"/k3s", "helm-", "k9s_", "opkssh-", "rstudio-server-", "code-server"} {
		found := false
		for _, l := range strings.Split(said, "\n") {
			if strings.Contains(l, name) && strings.HasSuffix(l, "not verified") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: not said to be not verified:\n%s", name, said)
		}
	}
}

// TestBuiltinUnsignedAndUnpinnedWarned: eessi's repository installed
// with GPG checks off is named, and so is the jupyter checkout following
// master (not pinned); a hashed environment is not warned about hashes.
func TestBuiltinUnsignedAndUnpinnedWarned(t *testing.T) {
	clearArkEnv(t)
	eessi := goodRepo()
	eessi["name"], eessi["repo_name"] = "eessi", "cernvmfs_eessi_cfg"
	var p Provisioner
	err := p.Prepare(map[string]any{"groups": []string{"eessi", "openondemand"}, "repos": []any{goodRepo(), eessi}, "repo_username": "u", "repo_password": "p",
		"python_envs": []map[string]any{{"path": "/opt/h", "requirements": []string{"a==1 --hash=sha256:" + strings.Repeat("0", 64)}}}})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(append(p.plan.repoWarnings(), p.plan.contentWarnings()...), "\n")
	for _, w := range []string{
		"group eessi installs the packages of repository cernvmfs_eessi_cfg with GPG checks off (--nogpgcheck): their signatures are not verified",
		"bc_example_jupyter.git is not reproducible: not pinned, the commit it gives is not verified (recorded in image.json)",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("no warning %q in:\n%s", w, got)
		}
	}
	if strings.Contains(got, "/opt/h carry no --hash") {
		t.Errorf("a hashed environment warned about:\n%s", got)
	}
}

// TestHTTPPythonIndexNeedsOptIn: a plain-http index (the groups' or an
// environment's) is refused at validate, naming the option and the
// opt-in; python_index_insecure accepts it.
func TestHTTPPythonIndexNeedsOptIn(t *testing.T) {
	clearArkEnv(t)
	raw := map[string]any{"groups": []string{"ansible_init"}, "python_index_url": "http://pypi.lab/simple",
		"python_envs": []map[string]any{{"path": "/opt/a", "index_url": "https://pypi.lab/simple", "extra_index_url": "http://extra.lab/simple", "requirements": []string{"a==1"}}}}
	var p Provisioner
	err := p.Prepare(raw)
	const why = " is plain http: pip would trust the host (--trusted-host) and what it serves is not verified unless pinned by hash; use https, or set python_index_insecure = true to accept it"
	for _, want := range []string{"python_index_url http://pypi.lab/simple" + why, "python_envs[0]: extra_index_url http://extra.lab/simple" + why} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want %q in %v", want, err)
		}
	}
	if err != nil && strings.Contains(err.Error(), "index_url https://") {
		t.Errorf("an https index refused: %v", err)
	}
	raw["python_index_insecure"] = true
	var q Provisioner
	if err := q.Prepare(raw); err != nil {
		t.Fatal(err)
	}
}
