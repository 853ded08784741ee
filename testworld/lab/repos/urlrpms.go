package repos

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// RPMs the appliance installs by URL rather than from a repository
// (prometheus-slurm-exporter and code-server from GitHub releases,
// rstudio-server from Posit's download site), built as stand-ins for the
// release server to serve: unsigned as upstream's are, or signed with the lab key
// (imported under every key file name, so a build that imports its keys
// trusts it).

// URLRPM is one package served by URL.
type URLRPM struct {
	Path   string // URL path on the release server
	Name   string
	EVR    string // version-release
	Signed bool
}

// URLRPMs are the packages served by URL, at the appliance's URL shapes.
var URLRPMs = []URLRPM{
	{Path: "/stackhpc/prometheus-slurm-exporter/releases/download/0.22/prometheus-slurm-exporter-0.22-1.el8.x86_64.rpm",
		Name: "prometheus-slurm-exporter", EVR: "0.22-1.el8"},
	{Path: "/server/rhel9/x86_64/rstudio-server-rhel-2025.05.1-513-x86_64.rpm",
		Name: "rstudio-server", EVR: "2025.05.1+513-1", Signed: true},
	// Posit's Rocky 8 build, at the rhel8 path (its release marks the
	// stand-in apart, so an image shows which one it has)
	{Path: "/server/rhel8/x86_64/rstudio-server-rhel-2025.05.1-513-x86_64.rpm",
		Name: "rstudio-server", EVR: "2025.05.1+513-1.rhel8", Signed: true},
	{Path: "/coder/code-server/releases/download/v4.102.2/code-server-4.102.2-amd64.rpm",
		Name: "code-server", EVR: "4.102.2-1"},
	{Path: "/k3s-io/k3s-selinux/releases/download/v1.6.latest.1/k3s-selinux-1.6-1.el9.noarch.rpm",
		Name: "k3s-selinux", EVR: "1.6-1.el9"},
}

// BuildURLRPMs builds (or reuses from o.CacheDir/url-rpms-<hash>) the
// URLRPMs and returns their contents by URL path.
func BuildURLRPMs(o Options) (map[string][]byte, error) {
	if o.CacheDir == "" {
		return nil, errors.New("repos: CacheDir is required")
	}
	logf := o.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	key, err := loadOrCreateKey(filepath.Join(o.CacheDir, "gpg"), logf)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	json.NewEncoder(h).Encode(struct {
		V, SDE, Key string
		RPMs        []URLRPM
	}{builderVersion, sourceDateEpoch, key.Fingerprint, URLRPMs})
	final := filepath.Join(o.CacheDir, "url-rpms-"+hex.EncodeToString(h.Sum(nil))[:16])
	if out, err := readURLRPMs(final); err == nil {
		return out, nil
	}
	if err := checkTools(); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp(o.CacheDir, ".build-url-rpms-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	rpmsDir := filepath.Join(work, "rpms")
	if err := os.MkdirAll(rpmsDir, 0o755); err != nil {
		return nil, err
	}
	var arts []*artifact
	var chunks [][]*artifact // a name once per rpmbuild run
	var signed []string
	seen := map[string]int{}
	for _, u := range URLRPMs {
		a := &artifact{def: pkgDef{Repo: "by URL", Name: u.Name, EVR: u.EVR, Bins: []string{"/usr/bin/" + u.Name}}, evr: u.EVR, majors: []string{"9"}}
		a.file = fmt.Sprintf("%s-%s.noarch.rpm", u.Name, a.vr())
		arts = append(arts, a)
		if n := seen[u.Name]; n < len(chunks) {
			chunks[n] = append(chunks[n], a)
		} else {
			chunks = append(chunks, []*artifact{a})
		}
		seen[u.Name]++
		if u.Signed {
			signed = append(signed, filepath.Join(rpmsDir, a.file))
		}
	}
	for i, c := range chunks {
		if err := buildChunk(filepath.Join(work, "build", fmt.Sprint(i)), i, c, key, rpmsDir); err != nil {
			return nil, err
		}
	}
	if len(signed) > 0 {
		if err := signAll(key, [][]string{signed}); err != nil {
			return nil, err
		}
	}
	out := filepath.Join(work, "out")
	for i, u := range URLRPMs {
		if err := linkOrCopy(filepath.Join(rpmsDir, arts[i].file), filepath.Join(out, filepath.FromSlash(strings.TrimPrefix(u.Path, "/")))); err != nil {
			return nil, err
		}
	}
	if err := os.Rename(out, final); err != nil {
		if r, err2 := readURLRPMs(final); err2 == nil { // a concurrent build finished first
			return r, nil
		}
		return nil, err
	}
	logf("repos: built %d RPMs served by URL into %s", len(URLRPMs), final)
	return readURLRPMs(final)
}

func readURLRPMs(dir string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, u := range URLRPMs {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(u.Path, "/"))))
		if err != nil {
			return nil, err
		}
		out[u.Path] = data
	}
	return out, nil
}
