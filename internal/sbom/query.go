package sbom

import (
	"fmt"
	"sort"
	"strings"
)

// ApplyQuery replaces what the manifest guessed with what the image's
// own databases say: out is the output of the provisioner's
// scripts/sbom.sh sbom_query (tab-separated rpm, repo, user and venv
// lines). rpm_urls' URLs and checksums are kept.
func (img *Image) ApplyQuery(out string) error {
	urls := map[string]File{}
	for _, r := range img.RPMs {
		if r.URL != "" {
			urls[r.Name] = File{URL: r.URL, SHA256: r.SHA256}
		}
	}
	repos := map[string]string{}
	var rpms []RPM
	var users []User
	venvs := map[string][]PyDist{}
	for n, l := range strings.Split(out, "\n") {
		f := strings.Split(l, "\t")
		switch {
		case f[0] == "rpm" && len(f) == 8:
			rpms = append(rpms, RPM{Name: f[1], EVR: EVR{f[2], f[3], f[4]}, Arch: f[5], License: f[6], Summary: f[7]})
		case f[0] == "repo" && len(f) == 7:
			repos[RPM{Name: f[1], EVR: EVR{f[2], f[3], f[4]}, Arch: f[5]}.NEVRA()] = f[6]
		case f[0] == "user" && len(f) == 6:
			users = append(users, User{Name: f[1], UID: f[2], GID: f[3], Home: f[4], Shell: f[5]})
		case f[0] == "venv" && len(f) == 4:
			venvs[f[1]] = append(venvs[f[1]], PyDist{Name: f[2], Version: f[3]})
		case strings.TrimSpace(l) == "":
		default:
			return fmt.Errorf("sbom query line %d: unexpected %q", n+1, l)
		}
	}
	if len(rpms) == 0 {
		return fmt.Errorf("sbom query: the rpm database listed no packages")
	}
	for i, r := range rpms {
		rpms[i].Repo = repos[r.NEVRA()]
		if f, ok := urls[r.Name]; ok {
			rpms[i].URL, rpms[i].SHA256 = f.URL, f.SHA256
		}
	}
	sort.Slice(rpms, func(i, j int) bool { return rpms[i].NEVRA() < rpms[j].NEVRA() })
	img.RPMs, img.Users = rpms, users
	for env, d := range venvs {
		sort.Slice(d, func(i, j int) bool { return d[i].Name < d[j].Name })
		if img.Python == nil {
			img.Python = map[string][]PyDist{}
		}
		img.Python[env] = d
	}
	img.Partial = nil
	return nil
}
