package fatimage

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/internal/redact"
)

// The site's build-time proxy. The appliance's bootstrap.yml runs its
// `proxy` role on hosts in the `proxy` group before any package install;
// the native build's repositories, packages and downloads come before
// the Ansible phase that runs that role, so the plugin gives every script
// it runs on the VM the proxy the role would configure, from the first,
// as environment variables read from the script's tmpfs secret dir (dnf,
// curl, pip, git and podman all honour them): never on the disk, never
// in an argument. The role itself still runs at its place for the site's
// Ansible, and final.yml's play removes what it wrote.

// proxyScope is the role whose defaults the proxy's variables are read
// with (proxy_https_proxy, proxy_no_proxy, proxy_dnf).
const proxyScope = "proxy"

// proxyEnvFile is the proxy's file in a script's secret dir, sourced by
// fatimage_secrets_in (scripts/prelude.sh).
const proxyEnvFile = "proxy.env"

// proxyVars are the variables the proxy is made from, proxy_basic_user
// and proxy_basic_password to redact and sweep for them.
var proxyVars = []string{"proxy_http_proxy", "proxy_https_proxy", "proxy_no_proxy", "proxy_dnf",
	"proxy_basic_user", "proxy_basic_password"}

// buildProxy is the proxy of the site's appliance for the build host.
type buildProxy struct {
	http, https, noProxy string
	// dnf is proxy_dnf: whether dnf goes through the proxy too.
	dnf            bool
	user, password string
	// err is the first variable the site's Ansible could not template.
	err error
}

// proxySettings are the site's proxy variables as the site's Ansible
// resolved them for the build host, and the first that it could not
// template (an error only if the proxy is used: forBuild).
func proxySettings(res *appliance.Result) *buildProxy {
	p := &buildProxy{dnf: true, err: res.RoleMissing(proxyScope)}
	for name, dst := range map[string]*string{"proxy_http_proxy": &p.http, "proxy_https_proxy": &p.https,
		"proxy_no_proxy": &p.noProxy, "proxy_basic_user": &p.user, "proxy_basic_password": &p.password} {
		v := res.Values[proxyScope][name]
		if v.Error != "" && p.err == nil {
			p.err = fmt.Errorf("the site's appliance: %s: the site's Ansible could not template it: %s", name, v.Error)
		}
		s, _ := v.Value.(string)
		*dst = strings.TrimSpace(s)
	}
	if v := res.Values[proxyScope]["proxy_dnf"]; v.Defined && v.Error == "" {
		p.dnf = ansibleBool(v.Value)
	}
	return p
}

// forBuild is the proxy when fatimage.yml's proxy role (the one that
// configures it, not final.yml's removal) runs for the build host; nil
// when it does not.
func (p *buildProxy) forBuild(res *appliance.Result, all []appliance.Step) (*buildProxy, error) {
	runs := false
	for _, st := range all {
		if st.Kind != "role" || st.Name != "proxy" || st.Vars["proxy_state"] == "absent" {
			continue
		}
		r, _, err := res.Runs(st)
		if err != nil {
			return nil, err
		}
		runs = runs || r
	}
	switch {
	case !runs:
		return nil, nil
	case p.err != nil:
		return nil, p.err
	case p.http == "":
		return nil, fmt.Errorf("the site's appliance: the build host runs the proxy role but proxy_http_proxy is empty (the role refuses that too: set proxy_http_address and proxy_http_port, or proxy_http_proxy)")
	}
	if _, err := url.Parse(p.http); err != nil {
		return nil, fmt.Errorf("the site's appliance: proxy_http_proxy is not a URL: %v", redact.Error(err))
	}
	if p.https == "" {
		p.https = p.http
	}
	return p, nil
}

// ansibleBool is Ansible's `| bool` of a value.
func ansibleBool(v any) bool {
	switch b := v.(type) {
	case bool:
		return b
	case string:
		switch strings.ToLower(strings.TrimSpace(b)) {
		case "yes", "on", "1", "true", "y", "t":
			return true
		}
	case float64:
		return b == 1
	}
	return false
}

// env is the proxy as a file of shell assignments the scripts source
// (fatimage_secrets_in): the lower- and upper-case names, as the tools
// differ in which they read (curl takes only the lower-case http_proxy).
// FATIMAGE_PROXY_DNF=0 keeps dnf off the proxy (proxy_dnf false).
func (p *buildProxy) env() []byte {
	var b strings.Builder
	for _, kv := range [][2]string{{"http_proxy", p.http}, {"https_proxy", p.https}, {"no_proxy", p.noProxy}} {
		for _, name := range []string{kv[0], strings.ToUpper(kv[0])} {
			fmt.Fprintf(&b, "%s=%s\n", name, shQuote(kv[1]))
		}
	}
	fmt.Fprintf(&b, "FATIMAGE_PROXY_DNF=%d\n", b01(p.dnf))
	return []byte(b.String())
}

// secrets are the proxy's credentials in every form they may be written
// in: what the build redacts and what must not be left in the image.
func (p *buildProxy) secrets() []string {
	if p == nil || p.password == "" {
		return nil
	}
	forms := redact.BasicForms(p.user, p.password)
	// the URL forms: user:password@ as a proxy URL spells it
	if p.user != "" {
		forms = append(forms, p.user+":"+p.password+"@", url.UserPassword(p.user, p.password).String()+"@")
	}
	return forms
}

// redactSecrets adds the proxy's credentials (and its URLs holding them)
// to what every log line, message and error is filtered for: the proxy
// role prints its settings when it runs through Ansible.
func (p *buildProxy) redactSecrets() {
	if p == nil || p.password == "" {
		return
	}
	redact.AddBasic(p.user, p.password)
	for _, u := range []string{p.http, p.https} {
		if strings.Contains(u, p.password) {
			redact.Add(u)
		}
	}
}

// proxy is the site's proxy the build's scripts go through; nil without.
func (p *plan) proxy() *buildProxy {
	if p.appliance == nil {
		return nil
	}
	return p.appliance.proxy
}

// shown is the proxy's address without its credentials.
func (p *buildProxy) shown() string {
	u, err := url.Parse(p.http)
	if err != nil {
		return "(not a URL)"
	}
	u.User = nil
	return u.String()
}
