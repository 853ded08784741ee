package packagesets

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runAnsibleInit runs the embedded ansible-init runner with python3
// against a metadata server serving meta, with ansible-playbook and
// ansible-galaxy replaced by scripts logging their arguments. It returns
// the log and whether the sentinel was written.
func runAnsibleInit(t *testing.T, meta string, playbooks ...string) (string, bool, error) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed to run the ansible-init runner: ", err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/openstack/latest/meta_data.json" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"uuid": "x", "meta": ` + meta + `}`))
	}))
	defer srv.Close()
	root, bin := t.TempDir(), t.TempDir()
	logFile := filepath.Join(bin, "log")
	for _, tool := range []string{"ansible-playbook", "ansible-galaxy"} {
		script := "#!/bin/sh\necho \"" + tool + " $*\" >>" + logFile + "\n"
		if err := os.WriteFile(filepath.Join(bin, tool), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range []string{"playbooks", "vars"} {
		if err := os.MkdirAll(filepath.Join(root, "etc/ansible-init", dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range playbooks {
		if err := os.WriteFile(filepath.Join(root, "etc/ansible-init/playbooks", p), []byte("---\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "etc/ansible-init/vars/site.yml"), []byte("x: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runner, err := Embedded("ansible_init/ansible-init")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "-")
	cmd.Stdin = strings.NewReader(string(runner))
	cmd.Env = append(os.Environ(), "ANSIBLE_INIT_ROOT="+root, "ANSIBLE_INIT_BIN="+bin,
		"ANSIBLE_INIT_METADATA_URL="+srv.URL+"/openstack/latest/meta_data.json")
	out, runErr := cmd.CombinedOutput()
	t.Logf("ansible-init:\n%s", out)
	data, err := os.ReadFile(logFile)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	_, statErr := os.Stat(filepath.Join(root, "var/lib/ansible-init.done"))
	return strings.ReplaceAll(string(data), root, "ROOT"), statErr == nil, runErr
}

// The runner does what the appliance's ansible-init is documented to do.
func TestAnsibleInitRunner(t *testing.T) {
	t.Run("disabled", func(t *testing.T) {
		log, done, err := runAnsibleInit(t, `{"ansible_init_disable": "true"}`, "10-compute-init.yml")
		if err != nil || log != "" || done {
			t.Errorf("disabled: err %v, ran %q, sentinel %v", err, log, done)
		}
	})
	t.Run("runs", func(t *testing.T) {
		meta := `{"ansible_init_coll_0_name": "stackhpc.linux", "ansible_init_coll_0_version": "1.5.0",
			"ansible_init_pb_1_name": "stackhpc.linux.late", "ansible_init_pb_0_name": "stackhpc.linux.early", "ansible_init_pb_0_stage": "pre"}`
		log, done, err := runAnsibleInit(t, meta, "10-compute-init.yml", "05-gateway-init.yml")
		pb := "ansible-playbook --connection local --inventory 127.0.0.1, --extra-vars @ROOT/etc/ansible-init/vars/site.yml "
		want := "ansible-galaxy collection install stackhpc.linux:1.5.0\n" +
			pb + "stackhpc.linux.early\n" +
			pb + "ROOT/etc/ansible-init/playbooks/05-gateway-init.yml\n" +
			pb + "ROOT/etc/ansible-init/playbooks/10-compute-init.yml\n" +
			pb + "stackhpc.linux.late\n"
		if err != nil || log != want || !done {
			t.Errorf("err %v, sentinel %v, ran\n%s\nwant\n%s", err, done, log, want)
		}
	})
	t.Run("bad stage", func(t *testing.T) {
		log, done, err := runAnsibleInit(t, `{"ansible_init_pb_0_name": "x", "ansible_init_pb_0_stage": "middle"}`)
		if err == nil || log != "" || done {
			t.Errorf("bad stage: err %v, ran %q, sentinel %v", err, log, done)
		}
	})
}
