package lab_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/cloud"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/repos"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
)

var theLab *lab.Lab

func TestMain(m *testing.M) {
	os.Exit(labtest.Main(m, &theLab))
}

// openstack runs the official CLI against the lab and decodes its JSON.
func openstack(t *testing.T, out any, args ...string) string {
	t.Helper()
	b, err := openstackCmd(args...).Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("openstack %s: %v\n%s%s", strings.Join(args, " "), err, b, stderr)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("openstack %s: %v\n%s", strings.Join(args, " "), err, b)
		}
	}
	return string(b)
}

// openstackCmd is the official CLI against the lab's cloud.
func openstackCmd(args ...string) *exec.Cmd {
	cmd := exec.Command("openstack", args...)
	cmd.Env = append(os.Environ(), "OS_CLOUD="+theLab.Env["OS_CLOUD"], "OS_CLIENT_CONFIG_FILE="+theLab.Env["OS_CLIENT_CONFIG_FILE"])
	return cmd
}

var ipv4 = regexp.MustCompile(`\b\d+\.\d+\.\d+\.\d+\b`)

// TestOpenStackCLI drives the lab with the official client as a person
// would, then logs in to the server it made and installs a package from
// the Pulp mirror with the server's own dnf.
func TestOpenStackCLI(t *testing.T) {
	labtest.Require(t)
	needs.Tools(t, "openstack")
	var images []map[string]any
	openstack(t, &images, "image", "list", "-f", "json")
	if !slices.ContainsFunc(images, func(m map[string]any) bool { return m["Name"] == lab.BaseImageName }) {
		t.Fatalf("image list lacks %s: %v", lab.BaseImageName, images)
	}
	var image map[string]any
	openstack(t, &image, "image", "show", lab.BaseImageName, "-f", "json")
	if image["status"] != "active" || image["id"] != theLab.BaseImageID {
		t.Fatalf("image show: %v", image)
	}
	var flavors, networks []map[string]any
	openstack(t, &flavors, "flavor", "list", "-f", "json")
	openstack(t, &networks, "network", "list", "-f", "json")
	if len(flavors) != len(lab.Flavors) || len(networks) != 2 {
		t.Fatalf("flavors %v networks %v", flavors, networks)
	}

	key := filepath.Join(t.TempDir(), "id")
	openstack(t, nil, "keypair", "create", "--private-key", key, "cli-key")
	var server map[string]any
	openstack(t, &server, "server", "create", "--image", lab.BaseImageName, "--flavor", "m1.small",
		"--network", "lab-net", "--key-name", "cli-key", "--wait", "-f", "json", "cli-server")
	if server["status"] != "ACTIVE" {
		t.Fatalf("server create: %v", server)
	}
	var servers []map[string]any
	openstack(t, &servers, "server", "list", "-f", "json")
	if len(servers) != 1 || servers[0]["Name"] != "cli-server" {
		t.Fatalf("server list: %v", servers)
	}
	fixed := ipv4.FindString(fmt.Sprint(server["addresses"]))
	if fixed == "" {
		t.Fatalf("no address in %v", server["addresses"])
	}

	var fip map[string]any
	openstack(t, &fip, "floating", "ip", "create", "public", "-f", "json")
	floating, _ := fip["floating_ip_address"].(string)
	openstack(t, nil, "server", "add", "floating", "ip", "cli-server", floating)
	var fips []map[string]any
	openstack(t, &fips, "floating", "ip", "list", "-f", "json")
	if len(fips) != 1 || fips[0]["Fixed IP Address"] != fixed {
		t.Fatalf("floating ip list: %v", fips)
	}

	// Over the floating IP, as rocky: install a package from the mirror.
	ssh := labtest.SSH(t, floating, lab.SSHUser, key, 30*time.Second)
	pkg := pickPackage(t, theLab.Repos)
	repo := fmt.Sprintf("[lab-baseos]\nname=lab baseos\nbaseurl=%s/rocky/9.6/BaseOS/x86_64/os/%s\nusername=%s\npassword=%s\ngpgcheck=1\n",
		theLab.Env["ARK_CONTENT_URL"], repos.NewerTimestamp, lab.ArkUser, theLab.ArkPassword)
	ssh.Run(t, "sudo tee /etc/yum.repos.d/lab.repo >/dev/null <<'EOF'\n"+repo+"EOF")
	ssh.Run(t, "sudo rpm --import /etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9")
	ssh.Run(t, "sudo dnf -y -q --disablerepo='*' --enablerepo=lab-baseos install "+pkg)
	if out := ssh.Run(t, "rpm -q "+pkg); !strings.HasPrefix(out, pkg+"-") {
		t.Fatalf("rpm -q %s: %q", pkg, out)
	}
	// The VM reaches the release server in GitHub's layout, and its own
	// metadata.
	sums := ssh.Run(t, "curl -fsS "+theLab.Env["LAB_RELEASES_URL"]+"/node_exporter/releases/download/v1.11.1/sha256sums.txt")
	if want := theLab.Releases.Checksums()["node_exporter-1.11.1.linux-amd64.tar.gz"]; want == "" || !strings.Contains(sums, want) {
		t.Fatalf("sha256sums.txt %q lacks %q", sums, want)
	}
	if md := ssh.Run(t, "curl -fsS http://169.254.169.254/openstack/latest/meta_data.json"); !strings.Contains(md, `"cli-server"`) || !strings.Contains(md, "cli-key") {
		t.Fatalf("meta_data.json: %s", md)
	}

	// The VM's disk is an overlay of the host root: the package's files
	// must be in the VM only.
	files := strings.Fields(ssh.Run(t, "rpm -ql "+pkg))
	ssh.Close()
	for _, f := range files {
		if _, err := os.Lstat(f); err == nil && !strings.HasSuffix(f, "/") {
			if fi, _ := os.Stat(f); fi != nil && !fi.IsDir() {
				t.Fatalf("%s of %s landed on the host", f, pkg)
			}
		}
	}

	var volumes []map[string]any
	openstack(t, &volumes, "volume", "list", "-f", "json")
	openstack(t, nil, "server", "delete", "--wait", "cli-server")
	openstack(t, nil, "floating", "ip", "delete", floating)
	openstack(t, nil, "keypair", "delete", "cli-key")
	labtest.RequireClean(t, theLab)
}

// pickPackage chooses a BaseOS package the base image does not have.
func pickPackage(t *testing.T, r *repos.Result) string {
	for _, p := range r.Packages["baseos"] {
		if !slices.ContainsFunc(r.BaseImageRPMs["9"], func(f string) bool { return strings.HasPrefix(filepath.Base(f), p+"-") }) {
			return p
		}
	}
	t.Fatal("no BaseOS package outside the base image")
	return ""
}

// BenchmarkLabUp starts a lab on a warm cache and boots one server,
// reporting the time to ready and from ACTIVE to the first SSH command.
func BenchmarkLabUp(b *testing.B) {
	labtest.Require(b)
	var up, toSSH time.Duration
	for b.Loop() {
		start := time.Now()
		l, err := lab.Start(context.Background(), lab.Options{Dir: b.TempDir(), CacheDir: labtest.CacheDir()})
		if err != nil {
			b.Fatal(err)
		}
		up += time.Since(start)
		d, err := labtest.BootAndSSH(b, l)
		l.Close()
		if err != nil {
			b.Fatal(err)
		}
		toSSH += d
	}
	b.ReportMetric(up.Seconds()/float64(b.N), "lab-up-s")
	b.ReportMetric(toSSH.Seconds()/float64(b.N), "active-to-ssh-s")
}

// TestHardResetFault injects a hard reset through the cloud's control
// API: the SSH session dies without a clean close and the VM comes back
// with a new boot id.
func TestHardResetFault(t *testing.T) {
	labtest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, c, _ := labtest.BootDial(ctx, t, theLab, "reset-me", "")
	before := c.Run(t, "cat /proc/sys/kernel/random/boot_id")
	sess, _ := c.NewSession()
	done := make(chan error, 1)
	go func() { done <- sess.Run("sleep 60") }()
	theLab.Cloud.SetFaults(cloud.Fault{Kind: cloud.FaultServerHardReset, Name: "^reset-me$", Times: 1})
	defer theLab.Cloud.SetFaults()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the session ended cleanly")
		}
	case <-ctx.Done():
		t.Fatal("the session survived the reset")
	}
	c.Close()
	c, err := srv.Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if after := c.Run(t, "cat /proc/sys/kernel/random/boot_id"); after == before {
		t.Fatalf("boot id unchanged: %s", after)
	}
}
