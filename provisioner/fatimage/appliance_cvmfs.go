package fatimage

import (
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
)

// The eessi role writes /etc/cvmfs/default.local from cvmfs_config
// (package_sets.yaml's eessi source). Its proxies come from the squid
// hosts of the build's inventory, and the appliance's builder is in
// squid: its own address would be the image's proxy, dead in every
// cluster booting it. The plugin leaves that address out (a deliberate
// difference, docs/appliance-contract.md's eessi row).
const (
	cvmfsScope    = "eessi"
	cvmfsVar      = "cvmfs_config"
	cvmfsProxyKey = "CVMFS_HTTP_PROXY"
	cvmfsProfile  = "CVMFS_CLIENT_PROFILE"
)

// withoutBuildProxy is cvmfs_config's value v without the proxies at
// host. With none left, the proxy key goes and the client profile is
// `single`, as the role's defaults choose without a proxy (its
// cvmfs_config_single, the profile first). v is not changed.
func withoutBuildProxy(v appliance.Value, host string) appliance.Value {
	m, ok := v.Value.(map[string]any)
	proxy, isStr := m[cvmfsProxyKey].(string)
	if !ok || !isStr || host == "" || len(v.Keys) != len(m) {
		return v
	}
	kept := keptProxies(proxy, host)
	if kept == proxy {
		return v
	}
	out := v
	nm := maps.Clone(m)
	out.Value = nm
	if kept != "" {
		nm[cvmfsProxyKey] = kept
		return out
	}
	delete(nm, cvmfsProxyKey)
	out.Keys = slices.DeleteFunc(slices.Clone(v.Keys), func(k string) bool { return k == cvmfsProxyKey })
	if _, ok := nm[cvmfsProfile]; !ok {
		nm[cvmfsProfile] = "single"
		out.Keys = append([]string{cvmfsProfile}, out.Keys...)
	}
	return out
}

// keptProxies is CVMFS_HTTP_PROXY's value (load-balanced groups joined
// by `|`, fail-over groups by `;`, optionally in the quotes the role
// adds) without the proxies at host; "" when none is left.
func keptProxies(value, host string) string {
	inner := strings.Trim(value, `'"`)
	var groups []string
	for _, g := range strings.Split(inner, ";") {
		var kept []string
		for _, p := range strings.Split(g, "|") {
			if u, err := url.Parse(strings.TrimSpace(p)); err == nil && u.Hostname() == host {
				continue
			}
			if strings.TrimSpace(p) != "" {
				kept = append(kept, p)
			}
		}
		if len(kept) > 0 {
			groups = append(groups, strings.Join(kept, "|"))
		}
	}
	if len(groups) == 0 {
		return ""
	}
	if kept := strings.Join(groups, ";"); kept != inner {
		return strings.Replace(value, inner, kept, 1)
	}
	return value
}
