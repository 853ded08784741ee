package cloud

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
)

const openstackCLI = "/usr/bin/openstack"

// TestOpenStackCLI drives the official python-openstackclient against the
// double. It is slow (~1-2 s per command), so it covers a fixed set of
// commands.
func TestOpenStackCLI(t *testing.T) {
	needs.Tools(t, openstackCLI)
	if testing.Short() {
		t.Skip("slow: runs the openstack CLI")
	}
	t.Parallel() // ~20 s of CLI start-up and 5 s polls; overlap with the rest
	l := newLab(t, nil)
	dir := t.TempDir()
	clouds := `clouds:
  lab:
    auth:
      auth_url: ` + l.c.AuthURL() + `
      username: lab
      password: lab-password
      project_name: lab
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionOne
    identity_api_version: 3
    interface: public
`
	cfg := filepath.Join(dir, "clouds.yaml")
	if err := os.WriteFile(cfg, []byte(clouds), 0o600); err != nil {
		t.Fatal(err)
	}
	useCloudsYAML := true
	run := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(openstackCLI, args...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "NO_PROXY=*", "no_proxy=*", "LANG=C.UTF-8"}
		if useCloudsYAML {
			cmd.Env = append(cmd.Env, "OS_CLIENT_CONFIG_FILE="+cfg, "OS_CLOUD=lab")
		}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		err := cmd.Run()
		t.Logf("openstack %s (%v)", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
		if err != nil {
			t.Fatalf("openstack %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, stdout.String(), stderr.String())
		}
		return stdout.Bytes()
	}
	list := func(args ...string) []map[string]any {
		t.Helper()
		var out []map[string]any
		b := run(append(args, "-f", "json")...)
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%v: %v: %s", args, err, b)
		}
		return out
	}
	show := func(args ...string) map[string]any {
		t.Helper()
		var out map[string]any
		b := run(append(args, "-f", "json")...)
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%v: %v: %s", args, err, b)
		}
		return out
	}

	imgs := list("image", "list")
	if len(imgs) != 1 || imgs[0]["Name"] != testImageName || imgs[0]["Status"] != "active" {
		t.Fatalf("image list: %v", imgs)
	}
	img := show("image", "show", testImageName)
	if img["id"] != l.imageID || img["min_disk"] != float64(10) {
		t.Fatalf("image show: %v", img)
	}
	// the same with explicit --os-* options instead of clouds.yaml
	useCloudsYAML = false
	fl := list("--os-auth-url", l.c.AuthURL(), "--os-username", "lab", "--os-password", "lab-password",
		"--os-project-name", "lab", "--os-user-domain-name", "Default", "--os-project-domain-name", "Default",
		"--os-region-name", "RegionOne", "--os-identity-api-version", "3", "flavor", "list")
	useCloudsYAML = true
	if len(fl) != 2 {
		t.Fatalf("flavor list: %v", fl)
	}
	nets := list("network", "list")
	if len(nets) != 2 {
		t.Fatalf("network list: %v", nets)
	}
	// Without --public-key the CLI prints the generated private key itself.
	if kp := run("keypair", "create", "cli-key"); !bytes.Contains(kp, []byte("PRIVATE KEY-----")) {
		t.Fatalf("keypair create: %s", kp)
	}
	srv := show("server", "create", "--image", testImageName, "--flavor", "m1.small", "--network", "lab-net",
		"--key-name", "cli-key", "--wait", "cli-server")
	if srv["status"] != "ACTIVE" {
		t.Fatalf("server create: %v", srv)
	}
	sl := list("server", "list")
	if len(sl) != 1 || sl[0]["Name"] != "cli-server" || sl[0]["Status"] != "ACTIVE" {
		t.Fatalf("server list: %v", sl)
	}
	run("server", "delete", "--wait", "cli-server")
	if vl := list("volume", "list"); len(vl) != 0 {
		t.Fatalf("volume list: %v", vl)
	}
	fip := show("floating", "ip", "create", "public")
	addr, _ := fip["floating_ip_address"].(string)
	if addr == "" {
		t.Fatalf("floating ip create: %v", fip)
	}
	fl2 := list("floating", "ip", "list")
	if len(fl2) != 1 || fl2[0]["Floating IP Address"] != addr {
		t.Fatalf("floating ip list: %v", fl2)
	}
	run("floating", "ip", "delete", addr)
	run("keypair", "delete", "cli-key")
	l.assertClean()
}
