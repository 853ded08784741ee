package provtest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
)

// TestApplianceProxyLab provisions a lab VM from a site whose inventory
// puts the build host in `proxy`, with the appliance's proxy_http_address,
// proxy_http_port and proxy_basic_user/password pointing at a real
// proxy (tinyproxy, lab.Proxy), while the VM reaches no content server
// but through it: the native steps' dnf (the packages step, before the
// Ansible phase that runs the proxy role) and curl (binaries) go through
// the proxy from the start; a hook run in the install phase, after
// bootstrap.yml's proxy play, finds the proxy in dnf.conf; final.yml's
// play leaves no proxy setting, and nothing in the image, its logs,
// image.json or the build output holds the address or the password
// (docs/appliance-contract.md, Build-time proxy).
func TestApplianceProxyLab(t *testing.T) {
	needs.Tools(t, "tinyproxy")
	ctx, srv, comm := labVM(t, "appliance-proxy", 20*time.Minute)
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	password := "pw" + hex.EncodeToString(b)
	proxy, err := theLab.StartProxy("fatimage", password)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	if err := theLab.SetAllServersReachableFromVMs(false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = theLab.SetAllServersReachableFromVMs(true) })
	site := appliancesite.New(t, appliancesite.Overrides)
	inv := filepath.Join(site.Environment, "inventory")
	writeFile(t, filepath.Join(inv, "proxy"), "[proxy:children]\nbuilder\n")
	writeFile(t, filepath.Join(inv, "group_vars", "all", "proxy.yml"), fmt.Sprintf(
		"proxy_http_address: %s\nproxy_http_port: %s\nproxy_basic_user: fatimage\nproxy_basic_password: %s\n", proxy.Host, proxy.Port, password))
	writeFile(t, filepath.Join(site.Environment, "hooks", "post-filesystems.yml"), `- name: Site hook using dnf
  hosts: builder
  become: true
  gather_facts: false
  tasks:
    - name: Record whether dnf is given the proxy
      ansible.builtin.shell: >-
        if grep -q '^proxy=http://' /etc/dnf/dnf.conf; then echo proxy set; else echo proxy unset; fi
        > /etc/fatimage-site-proxy
      changed_when: false
`)
	raw := siteConfig(t, site)
	raw["groups"] = []string{"always", "kernel_modules"}
	raw["binaries"] = []any{map[string]any{"name": "node_exporter", "sha256": theLab.BinaryChecksums()["node_exporter"]}}
	raw["release_base_url"] = theLab.Env["LAB_RELEASES_URL"]
	out := provisionSite(ctx, t, srv, comm, raw)
	// the native steps went through the proxy: the VM reaches neither
	// server directly
	for _, s := range []string{"ARK_CONTENT_URL", "LAB_RELEASES_URL"} {
		if proxy.Opened(theLab.Env[s]) == 0 {
			t.Errorf("the proxy opened no connection to %s (%s):\n%s", s, theLab.Env[s], proxy.Log())
		}
	}
	if got := run(t, comm, "/usr/local/bin/node_exporter --version"); !strings.Contains(got, "1.") {
		t.Errorf("node_exporter: %q", got)
	}
	if !strings.Contains(out, "every download of the build goes through http://"+proxy.Host+":"+proxy.Port) {
		t.Errorf("the build does not say it uses the site's proxy:\n%s", out)
	}
	// the Ansible phase after bootstrap.yml's proxy play still has the
	// role's proxy= in dnf.conf
	if got := run(t, comm, "cat /etc/fatimage-site-proxy"); got != "proxy set" {
		t.Errorf("the post-filesystems hook saw %q in dnf.conf, want proxy set", got)
	}
	left := run(t, comm, "grep -rlsa -e "+password+" -e "+proxy.Host+":"+proxy.Port+" /etc /root /home /var/lib/rocky /var/lib/image /var/log /var/tmp /tmp /run || true")
	if left != "" {
		t.Errorf("the proxy's address or password left in the image: %s", left)
	}
	if got := run(t, comm, "grep -hi -e proxy /etc/environment /etc/dnf/dnf.conf /etc/systemd/system.conf.d/90-proxy.conf 2>/dev/null || true"); got != "" {
		t.Errorf("proxy settings left: %q", got)
	}
	// Ansible prints the role's loop items, the proxy URL among them: the
	// plugin resolved the password with the site's variables and redacts it
	if strings.Contains(out, password) {
		t.Errorf("the build output shows the proxy password")
	}
	if !strings.Contains(out, "proxy") {
		t.Errorf("the proxy role's output is missing: %s", out)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
