package releases

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
)

// The k3s stand-in is served at its release path and refuses what the
// real k3s refuses before touching anything: a server without a node IP
// or with a templated one left unexpanded, an agent without its server,
// and kubectl or `token create` with no server running (the lab test,
// testworld/provtest TestK3sRuntimeLab, runs it under systemd).
func TestK3sStandIn(t *testing.T) {
	needs.Tools(t, "python3")
	s := start(t, Options{CacheDir: t.TempDir()})
	code, data := get(t, s.FileURL(K3sPath))
	if code != 200 || !strings.HasPrefix(string(data), "#!/usr/bin/python3\n") || strings.Contains(string(data), "@VERSION@") {
		t.Fatalf("k3s: %d\n%.200s", code, data)
	}
	dir := t.TempDir()
	k3s := filepath.Join(dir, "k3s")
	kubectl := filepath.Join(dir, "kubectl")
	kubeconfig := filepath.Join(dir, "k3s.yaml")
	for _, err := range []error{os.WriteFile(k3s, data, 0o755), os.Symlink(k3s, kubectl), os.WriteFile(kubeconfig, nil, 0o600)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		argv []string
		ok   bool
		want string
	}{
		{[]string{k3s, "--version"}, true, "k3s version " + K3sVersion},
		{[]string{k3s, "server", "--disable=traefik"}, false, "one --node-ip=<address> wanted"},
		{[]string{k3s, "server", "--node-ip=${K3S_NODE_IP}"}, false, "not an IP address"},
		{[]string{k3s, "agent", "--node-ip=10.0.0.5"}, false, "K3S_URL and K3S_TOKEN must be set"},
		{[]string{kubectl, "get", "nodes"}, false, "connection to the server 127.0.0.1:6443 was refused"},
		{[]string{k3s, "token", "create"}, false, "connection to the server 127.0.0.1:6443 was refused"},
		{[]string{k3s, "etcd-snapshot"}, false, "not implemented"},
	} {
		cmd := exec.Command(c.argv[0], c.argv[1:]...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "K3S_URL=", "K3S_TOKEN=", "NOTIFY_SOCKET=")
		out, err := cmd.CombinedOutput()
		if (err == nil) != c.ok || !strings.Contains(string(out), c.want) {
			t.Errorf("%s: %v\n%s\nwant ok %v and %q", strings.Join(c.argv[1:], " "), err, out, c.ok, c.want)
		}
	}
}
