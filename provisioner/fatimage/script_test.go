package fatimage

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runLocal runs a provisioner script with the real sh (and tar,
// sha256sum, awk) in workDir.
func runLocal(t *testing.T, workDir string, sc *vmScript) (string, error) {
	t.Helper()
	cmd := exec.Command("sh", "-eu", "-c", sc.render(workDir, "nobody"))
	cmd.Dir = workDir
	if os.Geteuid() != 0 {
		// unit tests run without root: install's owner flags are dropped
		bin := t.TempDir()
		if err := os.WriteFile(filepath.Join(bin, "install"), []byte(installWithoutOwner), 0o755); err != nil {
			t.Fatal(err)
		}
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

const installWithoutOwner = `#!/bin/sh
n=$#
while [ "$n" -gt 0 ]; do
  case "$1" in -o|-g) shift 2; n=$((n - 2)); continue ;; esac
  set -- "$@" "$1"; shift; n=$((n - 1))
done
exec /usr/bin/install "$@"
`

// runFaked runs a script locally with stand-ins for the VM's commands
// (name -> sh body run after logging) first on PATH. It returns the
// output and each stand-in's call as name|arg|arg...
func runFaked(t *testing.T, sc *vmScript, fakes map[string]string) (string, []string, error) {
	t.Helper()
	dir, bin := t.TempDir(), t.TempDir()
	log := filepath.Join(dir, "calls")
	for name, body := range fakes {
		script := "#!/bin/sh\n{ printf '%s' " + shQuote(name) + "; for a in \"$@\"; do printf '|%s' \"$a\"; done; echo; } >> " + shQuote(log) + "\n" + body + "\n"
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// a file a glob in an unquoted argument would expand to
	if err := os.WriteFile(filepath.Join(dir, "kernel-glob-trap"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-eu", "-c", sc.render(dir, "nobody"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	data, _ := os.ReadFile(log)
	calls := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(data) == 0 {
		calls = nil
	}
	return string(out), calls, err
}

func wantCalls(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Every embedded script is valid sh, alone and as the provisioner sends
// it; scripts/*.sh has no file the provisioner does not use.
func TestScriptsParse(t *testing.T) {
	entries, err := fs.ReadDir(scriptFiles, "scripts")
	if err != nil || len(entries) == 0 {
		t.Fatalf("no embedded scripts: %v", err)
	}
	used := map[string]bool{"prelude": true, "repofiles": true, "repos": true, "disable-repos": true, "binaries": true,
		"selinux": true, "update": true, "reboot": true, "login-home": true, "users": true, "packages": true,
		"grafana-plugins": true, "services": true, "files": true, "cleanup": true, "final": true, "facts": true, "image-json": true}
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".sh")
		if !used[name] {
			t.Errorf("scripts/%s is not used by any step", e.Name())
		}
		cmd := exec.Command("sh", "-n")
		cmd.Stdin = strings.NewReader(newScript(name).render("/tmp/w", "rocky"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: %v: %s", name, err, out)
		}
	}
}

func TestScriptQuotesValues(t *testing.T) {
	sc := newScript().set("X", "it's $(rm -rf /)").call("printf", "%s|", "a b", "'", "$HOME")
	out, err := runLocal(t, t.TempDir(), sc.call("printf", "%s\n", "${X}"))
	if err != nil {
		t.Fatal(err, out)
	}
	if out != "a b|'|$HOME|${X}\n" {
		t.Errorf("%q", out)
	}
	if got := sc.render("/w", "u"); !strings.Contains(got, `X='it'\''s $(rm -rf /)'`) {
		t.Error(got)
	}
}

func TestPackagesScript(t *testing.T) {
	p := packagePlan{Modules: []string{"nodejs:22"}, Install: []string{"htop", "@Xfce"}, Remove: []string{"cockpit-ws", "absent"},
		Exclude: []string{"kernel*"}, EnableRepos: []string{"crb", "grafana"}}
	out, calls, err := runFaked(t, p.script(), map[string]string{"dnf": "", "rpm": `[ "$2" = cockpit-ws ]`})
	if err != nil {
		t.Fatal(err, out)
	}
	opts := "dnf|-y|--setopt=max_parallel_downloads=10|--enablerepo=crb|--enablerepo=grafana|"
	wantCalls(t, calls, []string{
		opts + "module|enable|nodejs:22",
		opts + "--setopt=install_weak_deps=false|install|--exclude=kernel*|htop|@Xfce",
		"rpm|-q|cockpit-ws", "rpm|-q|absent",
		"dnf|-y|remove|cockpit-ws",
	})
	// the trace lines name the commands for errors and the dnf count
	if n := countDNF(out); n != 3 {
		t.Errorf("countDNF = %d:\n%s", n, out)
	}
	if (packagePlan{}).empty() != true || p.empty() {
		t.Error("empty")
	}
	// nothing installed among those to remove: dnf is not run
	_, calls, err = runFaked(t, packagePlan{Remove: []string{"a"}, WeakDeps: true}.script(), map[string]string{"dnf": "", "rpm": "exit 1"})
	if err != nil {
		t.Fatal(err)
	}
	wantCalls(t, calls, []string{"rpm|-q|a"})
}

func TestUpdateScript(t *testing.T) {
	sc := newScript("update").setList("DNF_ENABLE", nil).call("dnf_update", "grafana", "apptainer")
	out, calls, err := runFaked(t, sc, map[string]string{"dnf": `[ "$1" != needs-restarting ] || exit 1`})
	if err != nil {
		t.Fatal(err, out)
	}
	wantCalls(t, calls, []string{"dnf|-y|--setopt=max_parallel_downloads=10|update|--exclude=grafana|--exclude=apptainer", "dnf|needs-restarting|-r"})
	if !strings.Contains(out, "REBOOT-NEEDED") {
		t.Error(out)
	}
	// needs-restarting failing otherwise fails the step
	if out, _, err := runFaked(t, sc, map[string]string{"dnf": `[ "$1" != needs-restarting ] || exit 3`}); err == nil || !strings.Contains(out, "dnf needs-restarting -r failed (3)") {
		t.Errorf("%v %s", err, out)
	}
}

func TestUsersScript(t *testing.T) {
	sc := usersScript([]User{
		{Name: "slurm", UID: 202, Home: "/etc/slurm", Shell: "/sbin/nologin", System: true},
		{Name: "prometheus", UID: 981, Group: "prometheus", GID: 976, Home: "/var/lib/prometheus", System: true, CreateHome: true},
	})
	out, calls, err := runFaked(t, sc, map[string]string{"getent": "exit 2", "groupadd": "", "useradd": ""})
	if err != nil {
		t.Fatal(err, out)
	}
	wantCalls(t, calls, []string{
		"getent|passwd|slurm", "useradd|-u|202|-d|/etc/slurm|-s|/sbin/nologin|-r|-M|-U|slurm",
		"getent|group|prometheus", "groupadd|-r|-g|976|prometheus",
		"getent|passwd|prometheus", "useradd|-u|981|-g|prometheus|-d|/var/lib/prometheus|-r|-m|prometheus",
	})
	// an existing user with another uid is the error's cause
	out, _, err = runFaked(t, usersScript([]User{{Name: "slurm", UID: 202}}), map[string]string{"getent": "", "id": "echo 300"})
	if err == nil || strings.Join(scriptCauses(out), "\n") != "user slurm exists with uid 300, want 202" {
		t.Errorf("%v %q", err, out)
	}
}

func TestReposScripts(t *testing.T) {
	sc := newScript("repofiles", "repos").call("import_key", "/etc/pki/rpm-gpg/K").call("make_cache", "baseos", "epel")
	out, calls, err := runFaked(t, sc, map[string]string{"dnf": "", "rpm": ""})
	if err != nil {
		t.Fatal(err, out)
	}
	wantCalls(t, calls, []string{"rpm|--import|/etc/pki/rpm-gpg/K", "dnf|-y|makecache|--disablerepo=*|--enablerepo=baseos|--enablerepo=epel"})
	if got := enabledRepoIDs([]Repo{{RepoName: "baseos"}, {RepoName: "grafana", Enabled: new(bool)}}); strings.Join(got, ",") != "baseos" {
		t.Error(got)
	}
}

func TestGrafanaPluginsScript(t *testing.T) {
	sc := newScript("grafana-plugins").call("grafana_plugin", "grafana-opensearch-datasource", "2.8.1")
	out, calls, err := runFaked(t, sc, map[string]string{"grafana-cli": ""})
	if err != nil {
		t.Fatal(err, out)
	}
	wantCalls(t, calls, []string{"grafana-cli|plugins|install|grafana-opensearch-datasource|2.8.1"})
	// without grafana-cli the cause says what to install
	cmd := exec.Command("sh", "-eu", "-c", sc.render(t.TempDir(), "nobody"))
	cmd.Env = []string{"PATH=/nonexistent"}
	out2, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(strings.Join(scriptCauses(string(out2)), "\n"), "grafana plugins need grafana-cli") {
		t.Errorf("%v %s", err, out2)
	}
}

// Every cleanup step of the table has its function, and skipping works.
func TestCleanupScripts(t *testing.T) {
	body := scriptBody("cleanup")
	for _, s := range cleanupSteps {
		if !strings.Contains(body, "\n"+cleanupFunction(s.Name)+"() {") {
			t.Errorf("scripts/cleanup.sh lacks %s", cleanupFunction(s.Name))
		}
	}
	sc := newScript("cleanup")
	addCleanup(sc, []string{"journal", "tmp"}, false)
	r := sc.render("/w", "u")
	if strings.Contains(r, "cleanup_step 'journal'") || strings.Contains(r, "cleanup_step 'tmp'") || !strings.Contains(r, "cleanup_step 'dnf-clean'") || strings.Contains(r, "cleanup_step 'ssh-host-keys'") {
		t.Error(r)
	}
	final := newScript("cleanup")
	addCleanup(final, nil, true)
	if r := final.render("/w", "u"); !strings.Contains(r, "cleanup_step 'ssh-host-keys'\ncleanup_step 'login-ssh-keys'\n") {
		t.Error(r)
	}
	out, calls, err := runFaked(t, newScript("cleanup").call("cleanup_step", "dnf-clean"), map[string]string{"dnf": ""})
	if err != nil || !strings.Contains(out, "cleanup: dnf-clean") {
		t.Fatal(err, out)
	}
	wantCalls(t, calls, []string{"dnf|clean|all"})
}
