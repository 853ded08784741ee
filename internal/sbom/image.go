// Package sbom records what an image holds (the provisioner's manifest
// plus the image's rpm database, users and venvs) as a CycloneDX 1.6
// SBOM, reads a previous build's manifest or SBOM back, and reports what
// changed between two images.
package sbom

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Image is what one image holds, the common ground of a manifest, a
// VM query and an SBOM.
type Image struct {
	Name        string `json:"name,omitempty"`
	OS          string `json:"os,omitempty"` // /etc/os-release PRETTY_NAME
	OSID        string `json:"os_id,omitempty"`
	OSVersion   string `json:"os_version,omitempty"`
	Kernel      string `json:"kernel,omitempty"` // the kernel the image boots
	SourceImage Source `json:"source_image"`
	// Snapshots are repository -> snapshot timestamp.
	Snapshots  map[string]string   `json:"snapshots,omitempty"`
	RPMs       []RPM               `json:"rpms"`
	Containers []Container         `json:"containers,omitempty"`
	Python     map[string][]PyDist `json:"python,omitempty"`    // venv -> distributions
	Git        map[string]Git      `json:"git,omitempty"`       // destination -> checkout
	Downloads  map[string]File     `json:"downloads,omitempty"` // destination or id -> file
	Binaries   map[string]Binary   `json:"binaries,omitempty"`
	Users      []User              `json:"users,omitempty"`
	// Partial names what this record cannot compare: a manifest has no
	// users or source image, and of the venvs only the pins (it has no epochs or
	// licenses either, but those compare as unknown).
	Partial []string `json:"partial,omitempty"`
}

// Source is the image the build started from.
type Source struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name,omitempty"`
}

// RPM is one package of the rpm database.
type RPM struct {
	Name string `json:"name"`
	EVR
	Arch    string `json:"arch"`
	License string `json:"license,omitempty"`
	Summary string `json:"summary,omitempty"`
	// Repo is the repository dnf installed it from ("" unknown,
	// "@commandline" a file or URL).
	Repo string `json:"repo,omitempty"`
	// URL and SHA256 of an rpm_urls package.
	URL    string `json:"url,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
}

// Key is name.arch, what identifies a package across two images.
func (r RPM) Key() string { return r.Name + "." + r.Arch }

// NEVRA is name-[epoch:]version-release.arch.
func (r RPM) NEVRA() string { return r.Name + "-" + r.EVR.String() + "." + r.Arch }

// Container is a container image by digest.
type Container struct {
	Image  string `json:"image"`
	User   string `json:"user,omitempty"`
	Digest string `json:"digest"`
}

// PyDist is a Python distribution in a venv.
type PyDist struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Git is a checkout by commit.
type Git struct {
	Repo   string `json:"repo"`
	Ref    string `json:"ref,omitempty"`
	Commit string `json:"commit"`
}

// File is a download by sha256.
type File struct {
	URL    string `json:"url,omitempty"`
	SHA256 string `json:"sha256"`
}

// Binary is a binaries entry.
type Binary struct {
	Version string   `json:"version,omitempty"`
	SHA256  string   `json:"sha256"`
	Files   []string `json:"files,omitempty"`
}

// User is an account of the image's passwd database.
type User struct {
	Name  string `json:"name"`
	UID   string `json:"uid"`
	GID   string `json:"gid"`
	Home  string `json:"home,omitempty"`
	Shell string `json:"shell,omitempty"`
}

// Kernels are the installed kernel packages' version-releases.
func (img *Image) Kernels() []string {
	var k []string
	for _, r := range img.RPMs {
		if r.Name == "kernel-core" || r.Name == "kernel" && !img.has("kernel-core") {
			k = append(k, r.Version+"-"+r.Release+"."+r.Arch)
		}
	}
	sort.Strings(k)
	return k
}

func (img *Image) has(name string) bool {
	for _, r := range img.RPMs {
		if r.Name == name {
			return true
		}
	}
	return false
}

// ParseNVRA splits an `rpm -qa` name (name-version-release.arch, no
// epoch) into an RPM with an unknown epoch. rpm prints no arch where a
// package has none (gpg-pubkey-350d275d-6279464b): "(none)" then.
func ParseNVRA(s string) (RPM, error) {
	rel := strings.LastIndexByte(s, '-')
	ver := strings.LastIndexByte(s[:max(rel, 0)], '-')
	if rel < 0 || ver <= 0 {
		return RPM{}, fmt.Errorf("%q is not name-version-release.arch", s)
	}
	r := RPM{Name: s[:ver], EVR: EVR{Version: s[ver+1 : rel], Release: s[rel+1:]}, Arch: "(none)"}
	if dot := strings.LastIndexByte(r.Release, '.'); dot >= 0 {
		r.Release, r.Arch = r.Release[:dot], r.Release[dot+1:]
	}
	return r, nil
}

// manifestJSON is the part of the provisioner's manifest_output this
// package reads.
type manifestJSON struct {
	Image struct {
		OS        string            `json:"os_name"`
		OSID      string            `json:"os_id"`
		OSVersion string            `json:"os_version"`
		Kernel    string            `json:"kernel"`
		Snapshots map[string]string `json:"snapshots"`
		Binaries  map[string]Binary `json:"binaries"`
		Content   *struct {
			Git            map[string]Git      `json:"git"`
			Downloads      map[string]File     `json:"downloads"`
			Python         map[string][]string `json:"python"`
			RPMs           map[string]File     `json:"rpms"`
			GrafanaPlugins map[string]File     `json:"grafana_plugins"`
			Containers     []Container         `json:"containers"`
			Dashboards     map[string]struct {
				Origin string `json:"origin"`
				SHA256 string `json:"sha256"`
			} `json:"grafana_dashboards"`
			PythonGit map[string]Git `json:"python_git"`
		} `json:"content"`
	} `json:"image"`
	Packages []string `json:"packages"`
}

// ParseManifest reads a manifest_output file.
func ParseManifest(data []byte) (*Image, error) {
	var m manifestJSON
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	img := &Image{OS: m.Image.OS, OSID: m.Image.OSID, OSVersion: m.Image.OSVersion, Kernel: m.Image.Kernel,
		Snapshots: m.Image.Snapshots, Binaries: m.Image.Binaries,
		Partial: []string{"users", "python", "source image"}} // python: only python_envs' pins
	for _, p := range m.Packages {
		r, err := ParseNVRA(p)
		if err != nil {
			return nil, fmt.Errorf("manifest packages: %w", err)
		}
		img.RPMs = append(img.RPMs, r)
	}
	if c := m.Image.Content; c != nil {
		img.Git, img.Containers = c.Git, c.Containers
		img.Downloads = map[string]File{}
		for k, v := range c.Downloads {
			img.Downloads[k] = v
		}
		for k, v := range c.GrafanaPlugins {
			img.Downloads["grafana plugin "+k] = v
		}
		for k, v := range c.Dashboards {
			img.Downloads["grafana dashboard "+k] = File{URL: v.Origin, SHA256: v.SHA256}
		}
		for k, v := range c.PythonGit {
			if img.Git == nil {
				img.Git = map[string]Git{}
			}
			img.Git["python "+k] = v
		}
		img.Python = pinsToDists(c.Python)
		img.attachRPMURLs(c.RPMs)
	}
	return img, nil
}

// pinsToDists keeps the name==version pins of python_envs.
func pinsToDists(pins map[string][]string) map[string][]PyDist {
	if len(pins) == 0 {
		return nil
	}
	out := map[string][]PyDist{}
	for env, lines := range pins {
		for _, l := range lines {
			if n, v, ok := strings.Cut(l, "=="); ok {
				out[env] = append(out[env], PyDist{Name: strings.TrimSpace(n), Version: strings.TrimSpace(v)})
			}
		}
	}
	return out
}

func (img *Image) attachRPMURLs(byName map[string]File) {
	for i, r := range img.RPMs {
		if f, ok := byName[r.Name]; ok {
			img.RPMs[i].URL, img.RPMs[i].SHA256 = f.URL, f.SHA256
		}
	}
}
