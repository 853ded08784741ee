package fatimage

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/internal/redact"
)

// proxyResult is a resolution in which the build host is (or not) in
// the proxy group, with the site's proxy variables.
func proxyResult(inProxy bool, vals map[string]appliance.Value) (*appliance.Result, []appliance.Step) {
	steps := []appliance.Step{
		{Kind: "role", Name: "proxy", Hosts: "proxy", File: "ansible/bootstrap.yml"},
		{Kind: "role", Name: "proxy", Hosts: "proxy", File: "ansible/final.yml", Vars: map[string]any{"proxy_state": "absent"},
			When: []string{"proxy_remove | default(false) | bool"}},
	}
	res := &appliance.Result{Values: map[string]map[string]appliance.Value{proxyScope: vals},
		Patterns:   map[string]bool{"proxy": inProxy},
		Conditions: map[string]appliance.Truth{"proxy_remove | default(false) | bool": {Holds: true}}}
	return res, steps
}

const proxyTestPassword = `pw-7f3a'q'$x`

func proxyVals() map[string]appliance.Value {
	return map[string]appliance.Value{
		"proxy_basic_user":     {Defined: true, Value: "squid"},
		"proxy_basic_password": {Defined: true, Value: proxyTestPassword},
		"proxy_http_proxy":     {Defined: true, Value: "http://squid:" + proxyTestPassword + "@proxy.site:3128"},
		"proxy_https_proxy":    {Defined: true, Value: "http://squid:" + proxyTestPassword + "@proxy.site:3128"},
		"proxy_no_proxy":       {Defined: true, Value: "127.0.0.1,localhost,10.0.0.5"},
		"proxy_dnf":            {Defined: true, Value: true},
	}
}

// TestApplianceProxySecretsRedacted: the site's proxy credentials, which
// the proxy role prints when it runs through Ansible, are asked for in
// the resolution (in the proxy role's scope, for its defaults) and
// redacted from then on, in every form, whether the build uses the proxy
// or not.
func TestApplianceProxySecretsRedacted(t *testing.T) {
	req := applianceRequest()
	for _, v := range proxyVars {
		if !slices.ContainsFunc(req.Queries, func(q appliance.Query) bool { return q.Role == proxyScope && slices.Contains(q.Vars, v) }) {
			t.Errorf("the resolution does not ask for %s in the proxy role's scope", v)
		}
	}
	res, _ := proxyResult(false, proxyVals())
	proxySettings(res).redactSecrets()
	out := redact.String("changed: [default] => (item={'key': 'http_proxy', 'value': 'http://squid:" + proxyTestPassword + "@proxy.site:3128'})")
	if strings.Contains(out, proxyTestPassword) {
		t.Errorf("the proxy password is shown: %s", out)
	}
}

// TestApplianceProxyForBuild: the proxy is the build's when the proxy
// role of bootstrap.yml runs for the build host; its file, sourced by
// the scripts, exports the site's values exactly (quoting holds).
func TestApplianceProxyForBuild(t *testing.T) {
	res, steps := proxyResult(true, proxyVals())
	p, err := proxySettings(res).forBuild(res, steps)
	if err != nil || p == nil {
		t.Fatalf("%v %v", p, err)
	}
	if p.shown() != "http://proxy.site:3128" {
		t.Errorf("shown %q", p.shown())
	}
	env := filepath.Join(t.TempDir(), proxyEnvFile)
	if err := os.WriteFile(env, p.env(), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sh", "-euc", `set -a; . "$1"; set +a; sh -c 'printf "%s|%s|%s|%s|%s" "$http_proxy" "$HTTPS_PROXY" "$no_proxy" "$NO_PROXY" "$FATIMAGE_PROXY_DNF"'`, "sh", env).CombinedOutput()
	want := "http://squid:" + proxyTestPassword + "@proxy.site:3128|http://squid:" + proxyTestPassword + "@proxy.site:3128|127.0.0.1,localhost,10.0.0.5|127.0.0.1,localhost,10.0.0.5|1"
	if err != nil || string(out) != want {
		t.Errorf("sourced: %q %v, want %q", out, err, want)
	}

	// not in the proxy group: no proxy, whatever the variables
	res, steps = proxyResult(false, proxyVals())
	if p, err := proxySettings(res).forBuild(res, steps); p != nil || err != nil {
		t.Errorf("not in proxy: %v %v", p, err)
	}
	// proxy_dnf false keeps dnf direct
	vals := proxyVals()
	vals["proxy_dnf"] = appliance.Value{Defined: true, Value: "no"}
	res, steps = proxyResult(true, vals)
	if p, _ := proxySettings(res).forBuild(res, steps); p == nil || !strings.Contains(string(p.env()), "FATIMAGE_PROXY_DNF=0") {
		t.Errorf("proxy_dnf false: %v", p)
	}
	// in the group without an address: refused as the role refuses it
	vals = proxyVals()
	vals["proxy_http_proxy"] = appliance.Value{Defined: true, Value: ""}
	res, steps = proxyResult(true, vals)
	if _, err := proxySettings(res).forBuild(res, steps); err == nil || !strings.Contains(err.Error(), "proxy_http_proxy is empty") {
		t.Errorf("empty proxy: %v", err)
	}
	vals = proxyVals()
	vals["proxy_no_proxy"] = appliance.Value{Error: "'squid_http_port' is undefined"}
	res, steps = proxyResult(true, vals)
	if _, err := proxySettings(res).forBuild(res, steps); err == nil || !strings.Contains(err.Error(), "proxy_no_proxy") {
		t.Errorf("untemplated: %v", err)
	}
}
