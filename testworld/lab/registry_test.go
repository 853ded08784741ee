package lab_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
)

// TestRegistryFromVM: a VM's real podman pulls the appliance's images
// from the lab registry (plain HTTP, so --tls-verify=false), rootless as
// an unprivileged user, with the digests the lab reports; the
// authenticated registry refuses the pull without credentials and serves
// it with them; blocked from VMs, the pull is refused at once while the
// host still reaches the registry.
func TestRegistryFromVM(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, c, _ := labtest.BootDial(ctx, t, theLab, "registry-client", "")
	reg := theLab.Env["LAB_REGISTRY"]
	if reg != theLab.Registry.Host() || reg == "" {
		t.Fatalf("LAB_REGISTRY %q, registry at %s", reg, theLab.Registry.Host())
	}
	c.Run(t, "sudo useradd -m -u 1001 podman")
	for _, img := range theLab.Registry.Images() {
		ref := reg + "/" + img.Ref()
		c.Run(t, "sudo -iu podman podman pull -q --tls-verify=false "+ref)
		got := c.Run(t, "sudo -iu podman podman images --digests --format {{.Digest}} "+ref+" 2>/dev/null")
		if want := theLab.Registry.Digest(img.Ref()); got != want || want == "" {
			t.Fatalf("%s: podman reports digest %q, the lab %q", ref, got, want)
		}
	}

	auth := theLab.Env["LAB_REGISTRY_AUTH"]
	ref := auth + "/library/mysql:8.0.30"
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	out, err := sess.CombinedOutput("sudo podman pull -q --tls-verify=false " + ref)
	sess.Close()
	if err == nil || !strings.Contains(string(out), "unauthorized") {
		t.Fatalf("anonymous pull from the authenticated registry: %v: %s", err, out)
	}
	sess, err = c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	sess.Stdin = strings.NewReader(theLab.Env["LAB_REGISTRY_PASSWORD"])
	out, err = sess.CombinedOutput("sudo podman login --tls-verify=false --authfile /root/auth.json -u " + theLab.Env["LAB_REGISTRY_USERNAME"] + " --password-stdin " + auth +
		" && sudo podman pull -q --tls-verify=false --authfile /root/auth.json " + ref + " && sudo rm /root/auth.json")
	sess.Close()
	if err != nil {
		t.Fatalf("pull with credentials: %v: %s", err, out)
	}

	if err := theLab.SetServerReachableFromVMs("registry", false); err != nil {
		t.Fatal(err)
	}
	defer theLab.SetServerReachableFromVMs("registry", true) //nolint:errcheck // Close removes it anyway
	sess, err = c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, err = sess.CombinedOutput("sudo podman pull -q --tls-verify=false " + reg + "/beats/filebeat-oss:7.12.1")
	sess.Close()
	if err == nil || time.Since(start) > 30*time.Second {
		t.Fatalf("pull while blocked: %v after %v: %s", err, time.Since(start), out)
	}
	// lab-status lists both registries, this one blocked
	resp, err := http.Get(theLab.Env["LAB_CONTROL_URL"] + "/servers")
	if err != nil {
		t.Fatal(err)
	}
	var servers map[string]struct {
		URL              string `json:"url"`
		ReachableFromVMs bool   `json:"reachable_from_vms"`
	}
	err = json.NewDecoder(resp.Body).Decode(&servers)
	resp.Body.Close()
	if err != nil || servers["registry"].URL != "http://"+reg || servers["registry"].ReachableFromVMs ||
		servers["registry-auth"].URL != "http://"+auth || !servers["registry-auth"].ReachableFromVMs {
		t.Fatalf("servers %+v (%v)", servers, err)
	}
	if _, err := theLab.Registry.ManifestDigest("library/mysql", "8.0.30"); err != nil {
		t.Fatalf("the host no longer reaches the blocked registry: %v", err)
	}
}
