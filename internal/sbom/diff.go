package sbom

import (
	"maps"
	"slices"
	"sort"
	"strings"
)

// Change is one item that differs: From "" when added, To "" when removed.
type Change struct {
	Name string `json:"name"`
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
}

// Packages are the RPM changes by kind.
type Packages struct {
	Added      []Change `json:"added"`
	Removed    []Change `json:"removed"`
	Upgraded   []Change `json:"upgraded"`
	Downgraded []Change `json:"downgraded"`
}

// Report is what changed from a previous image to this one.
type Report struct {
	// Previous is where the previous image was read from; "" when there
	// was none, and then every item is reported as added.
	Previous    string   `json:"previous"`
	Count       int      `json:"package_count"`
	Packages    Packages `json:"packages"`
	Kernels     []Change `json:"kernels"`
	Snapshots   []Change `json:"snapshots"`
	Containers  []Change `json:"containers"`
	Python      []Change `json:"python"`
	Git         []Change `json:"git"`
	Downloads   []Change `json:"downloads"`
	Binaries    []Change `json:"binaries"`
	Users       []Change `json:"users"`
	SourceImage []Change `json:"source_image"`
	// Unknown is what the previous record could not tell (a manifest
	// has no users, for one), so is not compared.
	Unknown []string `json:"not_compared,omitempty"`
}

// Diff reports what changed from prev (nil: no previous image) to cur.
func Diff(prev, cur *Image, prevSource string) *Report {
	r := &Report{Previous: prevSource, Count: len(cur.RPMs)}
	if prev == nil {
		prev, r.Previous = &Image{}, ""
	}
	r.Packages = diffRPMs(prev.RPMs, cur.RPMs)
	r.Kernels = diffMaps(set(prev.Kernels()), set(cur.Kernels()))
	r.Snapshots = diffMaps(prev.Snapshots, cur.Snapshots)
	r.Containers = diffMaps(containers(prev), containers(cur))
	if !slices.Contains(prev.Partial, "python") {
		r.Python = diffMaps(python(prev), python(cur))
	}
	r.Git = diffMaps(mapValues(prev.Git, func(g Git) string { return g.Commit }), mapValues(cur.Git, func(g Git) string { return g.Commit }))
	r.Downloads = diffMaps(mapValues(prev.Downloads, func(f File) string { return f.SHA256 }), mapValues(cur.Downloads, func(f File) string { return f.SHA256 }))
	r.Binaries = diffMaps(mapValues(prev.Binaries, binaryString), mapValues(cur.Binaries, binaryString))
	if !slices.Contains(prev.Partial, "source image") {
		r.SourceImage = diffMaps(source(prev), source(cur))
	}
	r.Unknown = prev.Partial
	if !slices.Contains(prev.Partial, "users") {
		r.Users = diffMaps(users(prev), users(cur))
	}
	return r
}

func binaryString(b Binary) string { return strings.TrimSpace(b.Version + " sha256:" + b.SHA256) }

func set(l []string) map[string]string {
	m := map[string]string{}
	for _, s := range l {
		m[s] = "installed"
	}
	return m
}

func mapValues[T any](m map[string]T, f func(T) string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = f(v)
	}
	return out
}

func containers(img *Image) map[string]string {
	m := map[string]string{}
	for _, c := range img.Containers {
		k := c.Image
		if c.User != "" {
			k += " (" + c.User + ")"
		}
		m[k] = c.Digest
	}
	return m
}

func python(img *Image) map[string]string {
	m := map[string]string{}
	for env, ds := range img.Python {
		for _, d := range ds {
			m[env+" "+strings.ToLower(d.Name)] = d.Version
		}
	}
	return m
}

func users(img *Image) map[string]string {
	m := map[string]string{}
	for _, u := range img.Users {
		m[u.Name] = "uid " + u.UID + " gid " + u.GID + " " + u.Home + " " + u.Shell
	}
	return m
}

func source(img *Image) map[string]string {
	if img.SourceImage == (Source{}) {
		return nil
	}
	return map[string]string{"source image": strings.TrimSpace(img.SourceImage.Name + " " + img.SourceImage.ID)}
}

// diffMaps compares two name -> value maps.
func diffMaps(prev, cur map[string]string) []Change {
	out := []Change{}
	for _, k := range unionKeys(prev, cur) {
		p, inP := prev[k]
		c, inC := cur[k]
		if inP && inC && p == c {
			continue
		}
		out = append(out, Change{Name: k, From: p, To: c})
	}
	return out
}

// diffRPMs compares by name.arch; where either side holds several
// versions of one name.arch (kernels), by exact version instead.
func diffRPMs(prev, cur []RPM) Packages {
	pk, ck := byKey(prev), byKey(cur)
	out := Packages{Added: []Change{}, Removed: []Change{}, Upgraded: []Change{}, Downgraded: []Change{}}
	for _, k := range unionKeys(pk, ck) {
		p, c := pk[k], ck[k]
		if len(p) == 1 && len(c) == 1 {
			switch cmp := c[0].Compare(p[0].EVR); {
			case cmp > 0:
				out.Upgraded = append(out.Upgraded, Change{k, p[0].EVR.String(), c[0].EVR.String()})
			case cmp < 0:
				out.Downgraded = append(out.Downgraded, Change{k, p[0].EVR.String(), c[0].EVR.String()})
			}
			continue
		}
		for _, r := range p {
			if !containsEVR(c, r.EVR) {
				out.Removed = append(out.Removed, Change{Name: k, From: r.EVR.String()})
			}
		}
		for _, r := range c {
			if !containsEVR(p, r.EVR) {
				out.Added = append(out.Added, Change{Name: k, To: r.EVR.String()})
			}
		}
	}
	return out
}

// unionKeys are the keys of a and b, sorted.
func unionKeys[V any](a, b map[string]V) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

func byKey(l []RPM) map[string][]RPM {
	m := map[string][]RPM{}
	for _, r := range l {
		m[r.Key()] = append(m[r.Key()], r)
	}
	for _, v := range m {
		sort.Slice(v, func(i, j int) bool { return v[i].Compare(v[j].EVR) < 0 })
	}
	return m
}

func containsEVR(l []RPM, e EVR) bool {
	for _, r := range l {
		if r.Compare(e) == 0 {
			return true
		}
	}
	return false
}
