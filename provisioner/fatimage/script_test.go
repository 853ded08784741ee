package fatimage

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content/keys"
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

// withText appends shell the test spells itself to sc, its values in
// variables sc sets (quoted by the builder).
func withText(sc *vmScript, text string) *vmScript {
	sc.calls.WriteString(text)
	return sc
}

// runFaked runs a script locally with stand-ins for the VM's commands
// (name -> sh body run after logging) first on PATH. It returns the
// output and each stand-in's call as name|arg|arg...
func runFaked(t *testing.T, sc *vmScript, fakes map[string]string) (string, []string, error) {
	t.Helper()
	dir, bin := t.TempDir(), t.TempDir()
	log := filepath.Join(dir, "calls")
	for name, body := range fakes {
		script := "#!/bin/sh\n{ printf '%s' \"${0##*/}\"; for a in \"$@\"; do printf '|%s' \"$a\"; done; echo; } >> \"$FATIMAGE_TEST_CALLS\"\n" + body + "\n"
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
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "FATIMAGE_TEST_CALLS="+log)
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
		"selinux": true, "transaction": true, "reboot": true, "login-home": true, "users": true,
		"grafana-plugins": true, "services": true, "cleanup": true, "final": true, "facts": true, "image-json": true, "doca": true,
		"after-packages": true, "content": true, "download": true, "kernel": true,
		"system": true, "sbom": true}
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

// The package work is at most two dnf processes: the module streams, then
// the update, installs and removals as one dnf shell transaction.
func TestPackagesScript(t *testing.T) {
	p := packagePlan{Modules: []string{"nodejs:22"}, Update: true, Install: []string{"htop", "@Xfce", "grafana"}, Remove: []string{"cockpit-ws", "absent"},
		Exclude: []string{"kernel*"}, KeepAsIs: []string{"grafana", "apptainer"}, EnableRepos: []string{"crb", "grafana"}}
	// installed: cockpit-ws and grafana (rpm -qa prints it)
	rpm := `case "$1 $2" in "-q cockpit-ws") exit 0 ;; "-qa grafana") echo grafana-9 ;; "-q --qf") ;; "-q "*) exit 1 ;; esac`
	dnf := `if [ "$1" = -y ]; then for a; do case $a in */transaction.dnf) cat "$a" >> "$(dirname "$a")/shell-input" ;; esac; done; fi`
	out, calls, err := runFaked(t, p.script(), map[string]string{"dnf": dnf, "rpm": rpm})
	if err != nil {
		t.Fatal(err, out)
	}
	opts := "dnf|-y|--setopt=max_parallel_downloads=10|--setopt=max_downloads_per_mirror=10|--enablerepo=crb|--enablerepo=grafana|"
	var dnfCalls []string
	for _, c := range calls {
		if strings.HasPrefix(c, "dnf|") {
			dnfCalls = append(dnfCalls, c)
		}
	}
	if len(dnfCalls) != 2 || dnfCalls[0] != opts+"module|enable|nodejs:22" ||
		!strings.HasPrefix(dnfCalls[1], opts+"--setopt=install_weak_deps=false|--exclude=grafana|--exclude=kernel*|--exclude=absent|shell|") {
		t.Errorf("dnf calls:\n%s", strings.Join(dnfCalls, "\n"))
	}
	// one transaction: the update, the installs (grafana, installed and
	// kept as is, is not installed again), the removal of the installed
	// one; the one to remove that is not installed is excluded above, so
	// that the installs cannot bring it in
	if !strings.Contains(out, "dnf transaction:\n  upgrade\n  install htop @Xfce\n  remove cockpit-ws\n  run\n") {
		t.Errorf("transaction:\n%s", out)
	}
	if n := countDNF(out); n != 2 {
		t.Errorf("countDNF = %d:\n%s", n, out)
	}
	if (packagePlan{}).empty() != true || p.empty() || (packagePlan{Update: true}).empty() {
		t.Error("empty")
	}
	// dnf shell exits 0 after a failed command: its Error line fails the
	// step, and the dnf command is the failing one (for diagnoseDNF)
	failing := `if [ "$1" = -y ]; then echo 'No match for argument: nope'; echo 'Error: Unable to find a match: nope'; fi`
	out, _, err = runFaked(t, packagePlan{Install: []string{"nope"}}.script(), map[string]string{"dnf": failing, "rpm": "exit 1"})
	if err == nil || !strings.HasPrefix(failingCommand(out), "dnf ") {
		t.Errorf("a dnf shell error passed: %v\n%s", err, out)
	}
	// and its exit status fails it too
	if _, _, err = runFaked(t, packagePlan{Update: true}.script(), map[string]string{"dnf": "exit 1", "rpm": "exit 1"}); err == nil {
		t.Error("dnf's exit status 1 passed")
	}
}

// The reboot check asks rpm, not dnf: a core package installed after the
// boot (/proc/1's time) leaves a reboot pending; older ones do not.
func TestRebootCheck(t *testing.T) {
	rpm := `case "$1 $2" in "-q --qf") echo "glibc 1000"; echo "kernel-core 99999999999"; echo "package dbus is not installed" ;; *) exit 1 ;; esac`
	out, calls, err := runFaked(t, newScript("transaction").call("reboot_check"), map[string]string{"rpm": rpm})
	if err != nil {
		t.Fatal(err, out)
	}
	if strings.TrimSpace(out) != "REBOOT-PENDING: kernel-core installed after the boot" {
		t.Errorf("output %q", out)
	}
	for _, c := range calls {
		if strings.HasPrefix(c, "dnf") {
			t.Errorf("the check ran dnf: %s", c)
		}
	}
}

// Packages that need the running kernel split the plan: the update first,
// then (after the reboot) the rest.
func TestPlanNeedsRunningKernel(t *testing.T) {
	for _, tc := range []struct {
		install []string
		want    bool
	}{
		{[]string{"htop", "slurm"}, false},
		{[]string{"htop", "kernel-devel"}, true},
		{[]string{"nvidia-driver-dkms"}, true},
		{[]string{"kmod-lustre-client"}, true},
		{[]string{"doca-ofed"}, true},
	} {
		p := packagePlan{Update: true, Install: tc.install}
		if got := p.needsRunningKernel(); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.install, got, tc.want)
		}
	}
	u, r := packagePlan{Update: true, Modules: []string{"m:1"}, Install: []string{"kmod-x"}, KeepAsIs: []string{"grafana"}}.split()
	if !u.Update || len(u.Install)+len(u.Modules) != 0 || r.Update || len(r.Install) != 1 || len(r.Modules) != 1 {
		t.Errorf("split: %+v %+v", u, r)
	}
}

// usersFakes are getent and groupadd keeping the groups made in a file,
// so a later getent finds them, and useradd.
var usersFakes = map[string]string{
	"getent": `f=${FATIMAGE_TEST_CALLS%/*}/groups
[ "$1" = group ] && grep "^$2:" "$f" 2>/dev/null || exit 2`,
	"groupadd": `while [ $# -gt 1 ]; do if [ "$1" = -g ]; then gid=$2; fi; shift; done
echo "$1:x:${gid:-999}:" >> "${FATIMAGE_TEST_CALLS%/*}/groups"`,
	"useradd": "",
}

func TestUsersScript(t *testing.T) {
	no := false
	sc := usersScript([]User{
		{Name: "slurm", UID: 202, Home: "/etc/slurm", Shell: "/sbin/nologin", System: true},
		{Name: "prometheus", UID: 981, Group: "prometheus", GID: 976, Home: "/var/lib/prometheus", System: true, CreateHome: true},
		// the appliance's grafana entry: its group made on its own, the
		// user then gets useradd -N's group, the group being of its name
		{Name: "grafana", UID: 984, Group: "grafana", GID: 979, PrimaryGroup: &no, System: true},
		// a group apart of another name: the user gets a group of its own
		{Name: "bot", UID: 1234, Group: "bots", GID: 1300, PrimaryGroup: &no},
	})
	out, calls, err := runFaked(t, sc, usersFakes)
	if err != nil {
		t.Fatal(err, out)
	}
	// every group before any user, as the appliance's bootstrap.yml
	wantCalls(t, calls, []string{
		"getent|group|prometheus", "groupadd|-r|-g|976|prometheus",
		"getent|group|grafana", "groupadd|-r|-g|979|grafana",
		"getent|group|bots", "groupadd|-g|1300|bots",
		"getent|passwd|slurm", "getent|group|slurm", "useradd|-u|202|-d|/etc/slurm|-s|/sbin/nologin|-r|-M|-U|slurm",
		"getent|passwd|prometheus", "useradd|-u|981|-g|prometheus|-d|/var/lib/prometheus|-r|-m|prometheus",
		"getent|passwd|grafana", "getent|group|grafana", "useradd|-u|984|-r|-M|-N|grafana",
		"getent|passwd|bot", "getent|group|bot", "useradd|-u|1234|-M|-U|bot",
	})
	// an existing user with another uid is the error's cause
	out, _, err = runFaked(t, usersScript([]User{{Name: "slurm", UID: 202}}), map[string]string{"getent": "", "id": "echo 300"})
	if err == nil || strings.Join(scriptCauses(out), "\n") != "user slurm exists with uid 300, want 202" {
		t.Errorf("%v %q", err, out)
	}
	existingUser(t)
}

// An existing user with its uid gets the primary group and home it is
// given where they differ, as Ansible's user module does; what it is not
// given, or what is already so (the shell), is left.
func existingUser(t *testing.T) {
	t.Helper()
	// every command the script may run is faked: the test runs as root
	fakes := map[string]string{
		"getent":   `[ "$1" = passwd ] && echo "$2:x:202:300::/old:/sbin/nologin" || echo "$2:x:202:"`,
		"id":       `case $1 in -u) echo 202 ;; -gn) echo old ;; esac`,
		"groupadd": "", "useradd": "", "usermod": "",
	}
	sc := usersScript([]User{
		{Name: "slurm", UID: 202, Group: "slurm", GID: 202, Home: "/etc/slurm", Shell: "/sbin/nologin"},
		{Name: "rocky", UID: 202},
	})
	out, calls, err := runFaked(t, sc, fakes)
	if err != nil {
		t.Fatal(err, out)
	}
	var mods []string
	for _, c := range calls {
		if strings.HasPrefix(c, "usermod") {
			mods = append(mods, c)
		}
	}
	if strings.Join(mods, " ") != "usermod|-g|slurm|-d|/etc/slurm|slurm" || !strings.Contains(out, "modified user slurm") || !strings.Contains(out, "user rocky exists") {
		t.Errorf("usermod calls %q, output %q", mods, out)
	}
}

// The repos step runs no dnf: the transaction's first command loads the
// metadata.
func TestReposScripts(t *testing.T) {
	sc := newScript("repofiles", "repos", kindBody(keys.Kind{})).call("import_key", "/etc/pki/rpm-gpg/K")
	out, calls, err := runFaked(t, sc, map[string]string{"dnf": "", "rpm": ""})
	if err != nil {
		t.Fatal(err, out)
	}
	wantCalls(t, calls, []string{"rpm|--import|/etc/pki/rpm-gpg/K"})
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
	// dnf-clean empties the caches without dnf
	root := t.TempDir()
	for _, f := range []string{"etc/dnf/dnf.conf", "var/cache/dnf/baseos-1/repodata/repomd.xml", "var/cache/other/x.rpm", "var/cache/keep"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f), []byte("[main]\ncachedir = /var/cache/other\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, calls, err := runFaked(t, newScript("cleanup").set("FATIMAGE_SYSROOT", root).call("cleanup_step", "dnf-clean"), map[string]string{"dnf": ""})
	if err != nil || !strings.Contains(out, "cleanup: dnf-clean") {
		t.Fatal(err, out)
	}
	wantCalls(t, calls, nil)
	for dir, want := range map[string]int{"var/cache/dnf": 0, "var/cache/other": 0, "var/cache": 3} {
		if e, _ := os.ReadDir(filepath.Join(root, dir)); len(e) != want {
			t.Errorf("%s holds %d entries, want %d", dir, len(e), want)
		}
	}
}
