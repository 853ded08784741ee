package provtest

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
)

// labProxy is a forward proxy for plain http demanding Basic proxy
// credentials, as a site's squid with proxy_basic_password does.
type labProxy struct {
	auth          string
	served, nauth atomic.Int32
}

func (p *labProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !r.URL.IsAbs() {
		http.Error(w, "not a proxy request", http.StatusBadRequest)
		return
	}
	if r.Header.Get("Proxy-Authorization") != p.auth {
		p.nauth.Add(1)
		w.Header().Set("Proxy-Authenticate", `Basic realm="lab"`)
		http.Error(w, "proxy credentials", http.StatusProxyAuthRequired)
		return
	}
	p.served.Add(1)
	r.Header.Del("Proxy-Authorization")
	(&httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.Out.URL = pr.In.URL }}).ServeHTTP(w, r)
}

// startLabProxy serves a labProxy on the lab host's address the VMs reach
// the content servers at.
func startLabProxy(t *testing.T, user, password string) (*labProxy, string, string) {
	t.Helper()
	u, err := url.Parse(theLab.Env["ARK_CONTENT_URL"])
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort(u.Hostname(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	p := &labProxy{auth: "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	host, port, _ := net.SplitHostPort(l.Addr().String())
	return p, host, port
}

// TestApplianceProxyLab provisions a lab VM from a site whose inventory
// puts the build host in `proxy`, with the appliance's proxy_http_address,
// proxy_http_port and proxy_basic_user/password pointing at a proxy of
// the test: a hook run in the install phase, after bootstrap.yml's proxy
// play, finds the proxy in dnf.conf, and final.yml's play leaves no proxy
// setting and no trace of the address or password in the image
// (docs/appliance-contract.md, Build-time proxy).
func TestApplianceProxyLab(t *testing.T) {
	ctx, srv, comm := labVM(t, "appliance-proxy", 20*time.Minute)
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	password := "pw" + hex.EncodeToString(b)
	proxy, host, port := startLabProxy(t, "fatimage", password)
	site := appliancesite.New(t, appliancesite.Overrides)
	inv := filepath.Join(site.Environment, "inventory")
	writeFile(t, filepath.Join(inv, "proxy"), "[proxy:children]\nbuilder\n")
	writeFile(t, filepath.Join(inv, "group_vars", "all", "proxy.yml"), fmt.Sprintf(
		"proxy_http_address: %s\nproxy_http_port: %s\nproxy_basic_user: fatimage\nproxy_basic_password: %s\n", host, port, password))
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
	out := provisionSite(ctx, t, srv, comm, raw)
	// the Ansible phase after bootstrap.yml's proxy play still has the
	// role's proxy= in dnf.conf
	if got := run(t, comm, "cat /etc/fatimage-site-proxy"); got != "proxy set" {
		t.Errorf("the post-filesystems hook saw %q in dnf.conf, want proxy set", got)
	}
	if proxy.nauth.Load() != 0 {
		t.Errorf("%d requests without the proxy's credentials", proxy.nauth.Load())
	}
	left := run(t, comm, "grep -rls -e "+password+" -e "+host+":"+port+" /etc /root /var/lib/rocky /var/log/dnf* || true")
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
