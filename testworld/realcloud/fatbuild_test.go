//go:build realcloud

package realcloud

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/repos"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/pulpfake"
)

// fatRepos are the snapshots the tier's fat build installs from: what the
// openhpc set and the packages below need, and no more, to keep dnf's
// metadata work small on a loaded machine.
var fatRepos = []string{"baseos", "appstream", "crb", "epel", "OpenHPC", "OpenHPC-updates"}

// A fat build with our provisioner on a real guest: real Nova boots the
// guest image, the builder reaches it over SSH through Neutron's floating
// IP, and the fatimage provisioner installs the built-in openhpc set and
// a package of the template's from the Pulp double (the lab's signed
// repositories, behind its content guard), which the guest reaches through
// the router's SNAT; the guest is stopped and snapshotted, and nothing is
// left. The image then boots as a new server with the packages and the
// set's fixed-ID user, its services disabled, the repositories disabled
// and no credential in them.
func TestGuestFatBuild(t *testing.T) {
	tr := tier(t)
	clean(t, tr)
	manifest := filepath.Join(t.TempDir(), "fat.json")
	pulp, password, prov := fatProvisioner(t, fmt.Sprintf(`
    packages         = ["nano"]
    manifest_output  = %q`, manifest))
	name := uniqueName("rc-fat")
	r := mustBuild(t, tr, guestTemplate(t, tr, name, prov), "ARK_USERNAME="+lab.ArkUser, "ARK_PASSWORD="+password)
	if strings.Contains(r.Output(), password) {
		t.Errorf("the Ark password appeared in packer's output")
	}
	mustContain(t, r.Output(), "Connected to SSH!", "fatimage: done:", "Creating image "+name+" from server")
	if !pulpServed(pulp, "munge-0.5.13") {
		t.Errorf("the Pulp double served no munge package to the guest: %+v", pulp.Requests())
	}
	requireFatManifest(t, manifest)
	ic := client(t, tr, false, openstack.NewImageV2)
	img := imageNamed(t, ic, name)
	if img.Status != images.ImageStatusActive {
		t.Fatalf("image %s: status %s", img.ID, img.Status)
	}
	cc := client(t, tr, false, openstack.NewComputeV2)
	_, out := bootAndSSH(t, tr, cc, img.ID, name+"-boot",
		"rpm -q --qf '%{NAME}-%{VERSION}-%{RELEASE}\\n' slurm-ohpc munge nano; "+
			"getent passwd slurm rocky | cut -d: -f1,3,4,6; systemctl is-enabled slurmctld munge || true; "+
			"echo enabled: $(sudo grep -rlE '^[[:space:]]*enabled[[:space:]]*=[[:space:]]*1' /etc/yum.repos.d); "+
			"echo credentials: $(sudo grep -rlE '^(username|password)' /etc/yum.repos.d); "+
			"sudo test -s /var/lib/image/image.json && echo image.json")
	want := "slurm-ohpc-23.11.10-321.ohpc.3.2\nmunge-0.5.13-13.el9\nnano-5.6.1-7.el9\n" +
		"slurm:202:202:/etc/slurm\nrocky:1000:1000:/var/lib/rocky\ndisabled\ndisabled\n" +
		"enabled:\ncredentials:\nimage.json\n"
	if out != want {
		t.Errorf("the new server:\n%s\nwant\n%s", out, want)
	}
}

// requireFatManifest: the build's manifest records one dnf command, no
// reboot, and the snapshots it installed from.
func requireFatManifest(t *testing.T, path string) {
	t.Helper()
	var m struct {
		DNFRuns int `json:"dnf_runs"`
		Reboots int `json:"reboots"`
		Image   struct {
			Snapshots map[string]string `json:"snapshots"`
		} `json:"image"`
	}
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil || m.DNFRuns != 1 || m.Reboots != 0 || m.Image.Snapshots["OpenHPC-updates"] != repos.NewerTimestamp {
		t.Errorf("manifest_output (%v): %+v", err, m)
	}
}

// fatProvisioner is the tier's fat build: the fatimage provisioner block
// installing the openhpc set from guestPulp's repositories (with more
// attributes), the Pulp double and its password (ARK_PASSWORD).
func fatProvisioner(t *testing.T, more string) (pulp *pulpfake.Server, password, block string) {
	t.Helper()
	pulp, password, entries := guestPulp(t)
	return pulp, password, fmt.Sprintf(`
  provisioner "fatimage" {
    repos            = [%s]
    groups           = ["openhpc"]
    update           = false
    default_binaries = false%s
  }
`, entries, more)
}

// guestPulp serves the lab's repositories (built in the lab's cache) on
// the external network's gateway, the host's address the guests reach
// through the router's SNAT, behind a content guard with a new password;
// entries are fatRepos' newer snapshots as the provisioner's repos list
// in HCL.
func guestPulp(t *testing.T) (pulp *pulpfake.Server, password, entries string) {
	t.Helper()
	rs, err := repos.Build(repos.Options{CacheDir: filepath.Join(lab.DefaultCacheDir(), "repos"), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	secret := make([]byte, 12)
	_, _ = rand.Read(secret)
	password = hex.EncodeToString(secret)
	pulp = pulpfake.New(pulpfake.Options{Addr: net.JoinHostPort(ExternalGateway, "0")})
	for _, d := range repos.Distributions(rs, &pulpfake.Guard{Users: map[string]string{lab.ArkUser: password}}) {
		pulp.AddDistribution(d)
	}
	if err := pulp.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pulp.Close() })
	var list []string
	for _, key := range fatRepos {
		s, ok := rs.SnapshotFor("9", key, repos.NewerTimestamp)
		if !ok {
			t.Fatalf("the lab has no newer %s snapshot", key)
		}
		list = append(list, fmt.Sprintf(`{ name = %q, repo_file = %q, repo_name = %q, baseurl = %q, path = %q, timestamp = %q, gpgcheck = "true" }`,
			s.Repo, s.RepoFile, s.RepoName, strings.TrimRight(pulp.ContentURL(), "/")+"/"+s.BasePath(), s.PulpPath, s.Timestamp))
	}
	return pulp, password, strings.Join(list, ",\n      ")
}

// pulpServed: the Pulp double answered 200 to an authenticated request
// for a path containing part.
func pulpServed(pulp *pulpfake.Server, part string) bool {
	for _, r := range pulp.Requests() {
		if r.Status == 200 && r.HasAuth && strings.Contains(r.Path, part) {
			return true
		}
	}
	return false
}
