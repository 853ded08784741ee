package appliance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
)

// fakeTarget is a target no test connects to.
var fakeTarget = appliance.Target{Host: "192.0.2.10", Port: 22, User: "rocky", PrivateKey: []byte("not a key")}

// hostVars is what ansible-inventory says of the build host's variables
// under the given inventory arguments.
func hostVars(t *testing.T, env []string, args ...string) map[string]any {
	t.Helper()
	cmd := exec.Command("ansible-inventory", append(args, "--host", appliance.HostAlias)...)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ansible-inventory %v: %v\n%s", args, err, out)
	}
	var vars map[string]any
	if err := json.Unmarshal(out, &vars); err != nil {
		t.Fatal(err)
	}
	return vars
}

// TestCompositionIsTheScript checks that the inventory the engine composes
// (the appliance's packer/ansible-inventory.sh, which runs the site's
// ansible-inventory under the environment's ansible.cfg, plus Packer's
// host inventory) gives the build host the same variables as passing the
// common, site, .stackhpc and site environment inventories as several -i,
// and that the site's values win over the appliance's.
func TestCompositionIsTheScript(t *testing.T) {
	s := appliancesite.New(t, appliancesite.Overrides, "fatimage")
	args, env, cleanup, err := s.Composition(fakeTarget)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	var inventories []string
	for i := 0; i < len(args)-1; i++ {
		if args[i] == "-i" {
			inventories = append(inventories, "-i", args[i+1])
		}
	}
	if len(inventories) != 4 || !strings.HasSuffix(inventories[1], "packer/ansible-inventory.sh") {
		t.Fatalf("inventories %v: want the appliance's script, then Packer's host inventory", inventories)
	}
	viaScript := hostVars(t, env, inventories...)
	envs := filepath.Join(s.Repo, "environments")
	var direct []string
	for _, e := range []string{"common", "site", ".stackhpc", appliancesite.Overrides} {
		direct = append(direct, "-i", filepath.Join(envs, e, "inventory"))
	}
	viaDirect := hostVars(t, env, append(direct, inventories[2:]...)...)
	if len(viaScript) < 100 {
		t.Fatalf("only %d variables through the script", len(viaScript))
	}
	for k, v := range viaDirect {
		a, _ := json.Marshal(v)
		b, _ := json.Marshal(viaScript[k])
		if string(a) != string(b) {
			t.Errorf("%s: %s through several -i, %s through the script", k, a, b)
		}
	}
	if len(viaDirect) != len(viaScript) {
		t.Errorf("%d variables through several -i, %d through the script", len(viaDirect), len(viaScript))
	}
	if got := viaScript["grafana_version"]; got != "10.4.19" {
		t.Errorf("grafana_version %v: want the site environment's 10.4.19", got)
	}
	if got := viaScript["ansible_host"]; got != fakeTarget.Host {
		t.Errorf("ansible_host %v: want the target's %s", got, fakeTarget.Host)
	}
}

// TestSecretsNotOnTheCommandLine: the key and a become password travel in
// a private file.
func TestSecretsNotOnTheCommandLine(t *testing.T) {
	s := appliancesite.New(t, ".stackhpc")
	tg := fakeTarget
	tg.BecomePassword = "{{ s3cret }}"
	args, _, cleanup, err := s.Composition(tg)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	line := strings.Join(args, " ")
	if strings.Contains(line, "s3cret") || strings.Contains(line, "ssh-key") {
		t.Errorf("secret on the command line: %s", line)
	}
	var conn string
	for _, a := range args {
		if strings.HasSuffix(a, "connection.yml") {
			conn = strings.TrimPrefix(a, "@")
		}
	}
	data, err := os.ReadFile(conn)
	if err != nil {
		t.Fatalf("no connection vars file in %v: %v", args, err)
	}
	if st, _ := os.Stat(conn); st.Mode().Perm() != 0o600 {
		t.Errorf("%s mode %v", conn, st.Mode())
	}
	if !strings.Contains(string(data), `ansible_become_password: !unsafe "{{ s3cret }}"`) {
		t.Errorf("become password not given as an unsafe string:\n%s", data)
	}
}

func TestChecks(t *testing.T) {
	s := &appliance.Site{Repo: t.TempDir(), Environment: t.TempDir(), Groups: []string{"ok", "bad-group"}}
	err := s.Check()
	for _, want := range []string{"packer/ansible-inventory.sh", "no inventory directory", "no ansible.cfg", `"bad-group"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check: %v: want %q", err, want)
		}
	}
	_, err = s.Resolve(context.Background(), fakeTarget, appliance.Request{Queries: []appliance.Query{{Vars: []string{"a b"}}}}, nil)
	if err == nil || !strings.Contains(err.Error(), `variable "a b"`) {
		t.Errorf("Resolve with a bad name: %v", err)
	}
	_, err = s.Resolve(context.Background(), fakeTarget, appliance.Request{Queries: []appliance.Query{{Role: "ns.coll.r", Vars: []string{"a"}, VarsFiles: []string{"x.yml"}}}}, nil)
	if err == nil || !strings.Contains(err.Error(), `role "ns.coll.r": vars files need a role that is not a collection's`) {
		t.Errorf("Resolve with a collection role's vars files: %v", err)
	}
	err = s.Run(context.Background(), fakeTarget, appliance.Play{Playbook: "p.yml", TasksFrom: "x.yml"}, nil)
	if err == nil || !strings.Contains(err.Error(), "go with a role") {
		t.Errorf("Run of a playbook with tasks_from: %v", err)
	}
	err = s.Run(context.Background(), appliance.Target{Host: "x y", Port: 0}, appliance.Play{Role: "r"}, nil)
	for _, want := range []string{`host "x y"`, "port 0", "user", "no private key"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Run with a bad target: %v: want %q", err, want)
		}
	}
}

func TestParseGroups(t *testing.T) {
	if got := appliance.ParseGroups(" doca, cuda,,"); !slices.Equal(got, []string{"doca", "cuda"}) {
		t.Errorf("ParseGroups: %v", got)
	}
}

// TestResolvePlaybook: every task that reads a value keeps it out of
// Ansible's output, and every task of the engine is tagged (the run
// selects only those).
func TestResolvePlaybook(t *testing.T) {
	data, err := appliance.ResolvePlaybook(appliance.Request{
		Queries:    []appliance.Query{{Vars: []string{"a"}}, {Role: "openondemand", Vars: []string{"b"}, Conditions: []string{"oidc_uri is defined"}}},
		Patterns:   []string{"control:!builder"},
		Conditions: []string{"'nfs' in group_names"},
	}, "/tmp/out.json")
	if err != nil {
		t.Fatal(err)
	}
	var plays []struct {
		Hosts string           `yaml:"hosts"`
		Tasks []map[string]any `yaml:"tasks"`
	}
	if err := yaml.Unmarshal(data, &plays); err != nil {
		t.Fatal(err)
	}
	if len(plays) != 5 || !strings.Contains(string(data), "- control:!builder") {
		t.Fatalf("plays: %s", data)
	}
	if got := plays[2].Tasks[len(plays[2].Tasks)-1]; got["when"] != "oidc_uri is defined" {
		t.Errorf("the role's condition is not evaluated in the role's play: %v", got)
	}
	var tasks []map[string]any
	for _, p := range plays {
		tasks = append(tasks, p.Tasks...)
	}
	// a block's tasks and its rescue's are tasks too
	for i := 0; i < len(tasks); i++ {
		for _, key := range []string{"block", "rescue"} {
			inner, _ := tasks[i][key].([]any)
			for _, it := range inner {
				tasks = append(tasks, it.(map[string]any))
			}
		}
	}
	if len(tasks) < 10 {
		t.Fatalf("%d tasks: %s", len(tasks), data)
	}
	for _, task := range tasks {
		if _, ok := task["ansible.builtin.import_role"]; ok {
			if task["when"] != false {
				t.Errorf("imported role not gated: %v", task)
			}
			continue
		}
		if tags, _ := task["tags"].([]any); len(tags) != 1 || tags[0] != "fatimage_engine" {
			t.Errorf("untagged task %v", task)
		}
		if _, reads := task["ansible.builtin.debug"]; reads && task["no_log"] != true && task["name"] != "host patterns" {
			t.Errorf("task reads a value without no_log: %v", task)
		}
	}
}

// TestResolvePlaybookVarsFiles: a query's role vars files are included,
// the first found, before its variables are read, in a play after every
// other scope's (included variables stay the host's).
func TestResolvePlaybookVarsFiles(t *testing.T) {
	files := []string{"/roles/osc.ood/vars/{{ ansible_distribution }}/{{ ansible_distribution_major_version }}.yml", "/roles/osc.ood/vars/{{ ansible_distribution }}.yml"}
	data, err := appliance.ResolvePlaybook(appliance.Request{Queries: []appliance.Query{
		{Role: "osc.ood", Vars: []string{"additional_rpm_installs"}, VarsFiles: files}, {Role: "mysql", Vars: []string{"mysql_tag"}}}}, "/tmp/out.json")
	if err != nil {
		t.Fatal(err)
	}
	var plays []struct {
		Name  string           `yaml:"name"`
		Tasks []map[string]any `yaml:"tasks"`
	}
	if err := yaml.Unmarshal(data, &plays); err != nil {
		t.Fatal(err)
	}
	if len(plays) != 4 || !strings.Contains(plays[1].Name, "mysql") || !strings.Contains(plays[2].Name, "osc.ood") {
		t.Fatalf("plays: %s", data)
	}
	inc := plays[2].Tasks[1]
	vars, _ := inc["vars"].(map[string]any)
	if inc["ansible.builtin.include_vars"] != "{{ item }}" || !strings.Contains(fmt.Sprint(inc["loop"]), "first_found") ||
		fmt.Sprint(vars["fatimage_engine_vars_files"]) != fmt.Sprint(files) || !strings.Contains(fmt.Sprint(plays[2].Tasks[2]), "additional_rpm_installs") {
		t.Errorf("the vars files' task, then the read: %v", plays[2].Tasks)
	}
}

// TestDecodeRoleConditions: a query's conditions come back under its
// role; a skipped task means the condition does not hold, a failed one
// carries Ansible's message.
func TestDecodeRoleConditions(t *testing.T) {
	req := appliance.Request{Queries: []appliance.Query{{Role: "osc.ood", Vars: []string{"x"}, Conditions: []string{"a", "b", "c"}}}}
	raw := `{"q": [[{"msg": 1}]], "qc": [[{"msg": "holds"}, {"skipped": true}, {"failed": true, "msg": "boom"}]], "qt": [[]],
		"c": [], "e": [], "p": {}, "groups": ["builder"]}`
	res, err := appliance.DecodeResult(req, []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	got := res.RoleConditions["osc.ood"]
	if !got["a"].Holds || got["b"].Holds || got["b"].Error != "" || got["c"].Holds || got["c"].Error != "boom" {
		t.Errorf("role conditions: %+v", got)
	}
	if _, err := appliance.DecodeResult(req, []byte(`{"q": [[{"msg": 1}]], "qc": [[]], "qt": [[]], "c": [], "e": [], "p": {}}`)); err == nil {
		t.Error("an answer missing a condition was taken")
	}
}

// TestDecodeKeyOrder: a mapping value keeps the order Ansible wrote its
// keys in (a role's template iterating .items() writes them so), which
// a Go map loses; other values have none.
func TestDecodeKeyOrder(t *testing.T) {
	req := appliance.Request{Queries: []appliance.Query{{Role: "eessi", Vars: []string{"m", "l"}}}}
	raw := `{"q": [[{"msg": {"Z": "1", "A": {"y": 1, "b": 2}, "M": 3}}, {"msg": ["b", "a"]}]], "qc": [[]], "qt": [[]],
		"c": [], "e": [], "p": {}, "groups": ["builder"]}`
	res, err := appliance.DecodeResult(req, []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	m, l := res.Values["eessi"]["m"], res.Values["eessi"]["l"]
	if !slices.Equal(m.Keys, []string{"Z", "A", "M"}) || m.Value.(map[string]any)["M"] != float64(3) {
		t.Errorf("mapping: keys %v, value %v; want Z, A, M in Ansible's order", m.Keys, m.Value)
	}
	if l.Keys != nil || len(l.Value.([]any)) != 2 {
		t.Errorf("list: keys %v, value %v", l.Keys, l.Value)
	}
}

func TestCommit(t *testing.T) {
	s := appliancesite.New(t, ".stackhpc")
	if _, err := s.Commit(context.Background()); err == nil || !strings.Contains(err.Error(), "not a git work tree") {
		t.Errorf("Commit of a tree without git: %v", err)
	}
	dir := t.TempDir()
	for _, c := range [][]string{{"init", "-q"}, {"-c", "user.email=t@example.org", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "x"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, c...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", c, err, out)
		}
	}
	want, _ := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	got, err := (&appliance.Site{Repo: dir}).Commit(context.Background())
	if err != nil || got != strings.TrimSpace(string(want)) || len(got) != 40 {
		t.Errorf("Commit: %q, %v; want %s", got, err, want)
	}
}

// TestRunUsesTheVenv: the checkout's venv's ansible-playbook runs, with
// the composition and the role's playbook, and no secret in its argv.
func TestRunUsesTheVenv(t *testing.T) {
	s := appliancesite.New(t, ".stackhpc", "fatimage")
	bin := filepath.Join(s.Repo, "venv", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	argv := filepath.Join(t.TempDir(), "argv")
	stub := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + argv + "\ncat \"$(printf '%s\\n' \"$@\" | tail -n 1)\" >> " + argv + "\necho ran\n"
	if err := os.WriteFile(filepath.Join(bin, "ansible-playbook"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	tg := fakeTarget
	tg.BecomePassword = "pw-xyzzy"
	var out strings.Builder
	if err := s.Run(context.Background(), tg, appliance.Play{Role: "journald", TasksFrom: "main.yml",
		Vars: map[string]any{"journald_storage": "{{ 'volatile' }}"}}, &out); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(argv)
	if err != nil || out.String() != "ran\n" {
		t.Fatalf("the venv's ansible-playbook did not run: %v, output %q", err, out.String())
	}
	got := string(data)
	for _, want := range []string{"--limit\nbuilder\n", "packer/ansible-inventory.sh\n", "name: journald", "tasks_from: main.yml", "hosts: builder", "journald_storage: '{{ ''volatile'' }}'"} {
		if !strings.Contains(got, want) {
			t.Errorf("run lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "pw-xyzzy") || strings.Contains(got, "not a key") {
		t.Errorf("secret on the command line:\n%s", got)
	}
}

// TestResolveErrors: what goes wrong is said with Ansible's own words.
func TestResolveErrors(t *testing.T) {
	s := appliancesite.New(t, ".stackhpc", "fatimage")
	ctx := context.Background()
	// a role the site lacks is left out (TestMissingRoleLeftOut), not
	// imported: what fails is reaching the (fake) VM
	_, err := s.Resolve(ctx, fakeTarget, appliance.Request{Queries: []appliance.Query{{Role: "no_such_role", Vars: []string{"x"}}}}, &strings.Builder{})
	if err == nil || strings.Contains(err.Error(), "no_such_role") || !strings.Contains(err.Error(), "UNREACHABLE") {
		t.Errorf("a missing role: %v", err)
	}
	closed := appliance.Target{Host: "127.0.0.1", Port: 9, User: "rocky", PrivateKey: []byte("not a key")}
	_, err = s.Resolve(ctx, closed, appliance.Request{Queries: []appliance.Query{{Vars: []string{"x"}}}}, &strings.Builder{})
	if err == nil || !strings.Contains(err.Error(), "UNREACHABLE") || !strings.Contains(err.Error(), "on 127.0.0.1") {
		t.Errorf("an unreachable VM: %v", err)
	}
}

// TestRunCancel: cancelling a run stops ansible-playbook's children too.
func TestRunCancel(t *testing.T) {
	s := appliancesite.New(t, ".stackhpc")
	bin := filepath.Join(s.Repo, "venv", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	stub := "#!/bin/sh\nsleep 60 &\necho $! > " + pidFile + "\nwait\n"
	if err := os.WriteFile(filepath.Join(bin, "ansible-playbook"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for range 100 {
			if _, err := os.Stat(pidFile); err == nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		cancel()
	}()
	start := time.Now()
	err := s.Run(ctx, fakeTarget, appliance.Play{Playbook: "ansible/fatimage.yml"}, &strings.Builder{})
	if err == nil || time.Since(start) > 8*time.Second {
		t.Fatalf("cancelled run: %v after %s", err, time.Since(start))
	}
	data, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	for range 100 {
		if pid > 0 && !running(pid) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	t.Errorf("the run's child %d outlived the cancel: %s", pid, stat)
}

// running says whether pid still runs. A zombie has ended: the killed
// shell's orphan waits there until PID 1 reaps it, which on a loaded CI
// machine may take longer than the test waits.
func running(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// the state follows the command's closing parenthesis
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func TestSummary(t *testing.T) {
	r := appliance.Result{Commit: "f49fc24f6818ea960a28aa2e41910532c86214f9", Environment: "/site/environments/.stackhpc",
		Duration: 1500 * time.Millisecond, Values: map[string]map[string]appliance.Value{"": {"a": {}, "b": {}}, "r": {"a": {}}},
		RoleConditions: map[string]map[string]appliance.Truth{"r": {"x": {}}}, Conditions: map[string]appliance.Truth{"y": {}},
		Texts: map[string]map[string]appliance.Value{"r": {"t": {}}}}
	want := "appliance f49fc24f6818, environment .stackhpc: 4 variables, 0 host patterns, 2 conditions resolved on the build VM in 1.5s"
	if got := r.Summary(); got != want {
		t.Errorf("Summary: %q, want %q", got, want)
	}
}

// resolveLocally runs the resolution's playbook for req with the real
// ansible-playbook against this machine, vars (YAML) as extra vars, and
// returns the decoded result and Ansible's output.
func resolveLocally(t *testing.T, req appliance.Request, vars string) (*appliance.Result, string) {
	t.Helper()
	needs.Tools(t, "ansible-playbook")
	dir := t.TempDir()
	out := filepath.Join(dir, "values.json")
	book, err := appliance.ResolvePlaybook(req, out)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"resolve.yml": string(book), "hosts": "builder ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n",
		"vars.yml": vars}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("ansible-playbook", "-i", filepath.Join(dir, "hosts"), "-e", "@"+filepath.Join(dir, "vars.yml"), filepath.Join(dir, "resolve.yml"))
	cmd.Env = append(os.Environ(), "ANSIBLE_BECOME_METHOD=sudo", "ANSIBLE_LOCAL_TEMP="+dir, "ANSIBLE_NOCOLOR=1")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ansible-playbook: %v\n%s", err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	res, err := appliance.DecodeResult(req, data)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

// TestResolveReadsWithAnsible: a scope's variables are read in one looped
// task; when one of them cannot be templated (a cluster's secret) or does
// not exist, each is read alone, so the others still resolve, the missing
// one is undefined and the failing one carries Ansible's message. No
// value reaches Ansible's output either way.
func TestResolveReadsWithAnsible(t *testing.T) {
	req := appliance.Request{Queries: []appliance.Query{
		{Vars: []string{"pkgs", "ver"}},
		{Vars: []string{"pkgs", "nosuch", "secret", "ver"}, Texts: []string{"ver", "nosuch"}},
	}}
	res, out := resolveLocally(t, req, "pkgs: [a-sekrit-pkg, b]\nver: \"4.1.5\"\nsecret: \"{{ vault_admin_password }}\"\n")
	if strings.Contains(out, "sekrit") || strings.Contains(out, "4.1.5") {
		t.Errorf("a value in Ansible's output:\n%s", out)
	}
	if !strings.Contains(out, "rescued=2") {
		t.Errorf("the second scope's loops (variables, texts) did not fail over to single reads:\n%s", out)
	}
	vals := res.Values[""]
	if v := vals["pkgs"]; !v.Defined || fmt.Sprint(v.Value) != "[a-sekrit-pkg b]" || v.Error != "" {
		t.Errorf("pkgs: %+v", v)
	}
	if v := vals["ver"]; !v.Defined || v.Value != "4.1.5" {
		t.Errorf("ver: %+v", v)
	}
	if v := vals["nosuch"]; v.Defined {
		t.Errorf("nosuch: %+v, want undefined", v)
	}
	if v := vals["secret"]; !v.Defined || !strings.Contains(v.Error, "vault_admin_password") {
		t.Errorf("secret: %+v, want Ansible's error naming the variable", v)
	}
	if v := res.Texts[""]["ver"]; v.Value != "4.1.5" {
		t.Errorf("ver as text: %+v", v)
	}
	if v := res.Texts[""]["nosuch"]; v.Defined {
		t.Errorf("nosuch as text: %+v, want undefined", v)
	}
}

// TestResolveTextsWithAnsible: the resolution's playbook, run by the real
// ansible-playbook, gives a query's Texts as a template prints them (the
// float 100.0 as 100.0, which its decoded JSON value cannot say) beside
// the same variable's value.
func TestResolveTextsWithAnsible(t *testing.T) {
	req := appliance.Request{Queries: []appliance.Query{{Vars: []string{"skew"}, Texts: []string{"skew", "stratum", "logdir", "log"}}}}
	res, _ := resolveLocally(t, req, "skew: 100.0\nstratum: 10\nlogdir: /var/log/chrony\nlog: [tracking, rtc]\n")
	texts := res.Texts[""]
	for name, want := range map[string]string{"skew": "100.0", "stratum": "10", "logdir": "/var/log/chrony", "log": "['tracking', 'rtc']"} {
		if got := texts[name]; !got.Defined || got.Value != want {
			t.Errorf("text of %s: %+v, want %q", name, got, want)
		}
	}
	if v := res.Values[""]["skew"]; !v.Defined || fmt.Sprint(v.Value) != "100" && v.Value != "100.0" {
		t.Errorf("value of skew: %+v", v)
	}
}
