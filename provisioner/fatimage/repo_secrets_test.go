package fatimage

import (
	"encoding/base64"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/redact"
)

// TestRepoCredentialOptionsStayOffTheImage: a repos entry's credential
// options (proxy_password, proxy_username, a token) are in the build's
// repo files, not in the disabled ones left in /etc/yum.repos.d; other
// options stay in both (issue #26 item 4).
func TestRepoCredentialOptionsStayOffTheImage(t *testing.T) {
	clearArkEnv(t)
	repo := goodRepo()
	repo["proxy"] = "http://proxy.example:3128"
	repo["proxy_username"] = "proxy-user"
	repo["proxy_password"] = "Proxy-Pw-1"
	repo["sslclientkey"] = "/etc/pki/tls/private/client.key"
	repo["x_api_token"] = "Tok-en-2"
	var p Provisioner
	if err := p.Prepare(map[string]any{"repos": []any{repo}, "repo_username": "u", "repo_password": "Repo-Pw"}); err != nil {
		t.Fatal(err)
	}
	build := renderRepoFiles(p.plan.repos, p.plan.repoUsername, p.plan.repoPassword, false)[0].Content
	kept := renderRepoFiles(p.plan.repos, "", "", true)[0].Content
	for _, l := range []string{"proxy_password = Proxy-Pw-1", "proxy_username = proxy-user", "x_api_token = Tok-en-2", "password = Repo-Pw"} {
		if !strings.Contains(build, l) {
			t.Errorf("the build's repo file lacks %q:\n%s", l, build)
		}
		if strings.Contains(kept, l) {
			t.Errorf("the repo file left in the image has %q:\n%s", l, kept)
		}
	}
	for _, l := range []string{"proxy = http://proxy.example:3128", "sslclientkey = /etc/pki/tls/private/client.key"} {
		if !strings.Contains(kept, l) {
			t.Errorf("the repo file left in the image lost %q:\n%s", l, kept)
		}
	}
	// the clean check looks for every credential, in every form
	known := p.plan.knownSecrets()
	for _, f := range []string{"Repo-Pw", "Proxy-Pw-1", "Tok-en-2", base64.StdEncoding.EncodeToString([]byte("u:Repo-Pw")), url.QueryEscape("Tok-en-2")} {
		if !slices.Contains(known, f) {
			t.Errorf("the clean check does not look for %q (it has %q)", f, known)
		}
	}
	// a user name is no secret: as a pattern it would match ordinary text
	if slices.Contains(known, "proxy-user") || redact.String("proxy-user") != "proxy-user" {
		t.Error("the proxy user name is taken for a secret")
	}
	if slices.Contains(known, "") {
		t.Error("an empty pattern would match every file")
	}
	// and the process's filter hides them
	if got := redact.String("proxy Proxy-Pw-1 token Tok-en-2"); strings.Contains(got, "Proxy-Pw-1") || strings.Contains(got, "Tok-en-2") {
		t.Errorf("not redacted: %s", got)
	}
}

// TestProxyCredentialSwept: the end of the build looks for the site
// proxy's password, in every form and as the user:password@ of its URL,
// in the repository files and where the appliance's proxy role writes
// the proxy (dnf.conf, /etc/environment, systemd's manager
// configuration), and fails when final.yml's play left it there.
func TestProxyCredentialSwept(t *testing.T) {
	px := &buildProxy{http: "http://squid:Px-Pw-9@proxy.site:3128", user: "squid", password: "Px-Pw-9"}
	p := &plan{cfg: &Config{}, appliance: &applianceValues{proxy: px}}
	known := p.knownSecrets()
	for _, f := range []string{"Px-Pw-9", "squid:Px-Pw-9@", base64.StdEncoding.EncodeToString([]byte("squid:Px-Pw-9"))} {
		if !slices.Contains(known, f) {
			t.Errorf("the clean check does not look for %q (it has %q)", f, known)
		}
	}
	for _, want := range []string{"/etc/dnf/dnf.conf", "/etc/environment", "/etc/systemd/system.conf.d"} {
		if !slices.Contains(credentialSweepPaths, want) {
			t.Errorf("the sweep does not look in %s", want)
		}
	}
	dir := t.TempDir()
	repos, conf, env := filepath.Join(dir, "yum.repos.d"), filepath.Join(dir, "dnf.conf"), filepath.Join(dir, "environment")
	if err := os.MkdirAll(repos, 0o755); err != nil {
		t.Fatal(err)
	}
	sweep := func(confText string) (string, error) {
		pw := filepath.Join(dir, "pw")
		if err := os.WriteFile(pw, []byte(strings.Join(known, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(conf, []byte(confText), 0o644); err != nil {
			t.Fatal(err)
		}
		sc := newScript("disable-repos").set("REPOS_DIR", repos).call("verify_repos_clean", pw, conf, env, filepath.Join(dir, "absent"))
		return runLocal(t, dir, sc)
	}
	if out, err := sweep("[main]\ngpgcheck=1\nproxy=" + px.http + "\n"); err == nil || !strings.Contains(out, "dnf.conf") || !strings.Contains(out, "a credential of the build is still in the files above") {
		t.Errorf("the proxy left in dnf.conf passed the sweep: %v\n%s", err, out)
	}
	if out, err := sweep("[main]\ngpgcheck=1\n"); err != nil || !strings.Contains(out, "no credentials left") {
		t.Errorf("a clean dnf.conf failed the sweep: %v\n%s", err, out)
	}
}
