// Package repos builds the lab's RPM repositories: signed noarch stand-in
// packages named as a fat Slurm appliance image installs them, arranged in
// createrepo_c repositories at the appliance's Pulp paths, with an older
// and a newer timestamped snapshot of each.
//
// Everything is built with the host's rpmbuild, rpmsign, gpg and
// createrepo_c into Options.CacheDir, under a directory named after a hash
// of the recipe, so a second Build with the same recipe only reads a small
// JSON file.
package repos

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/internal/timestamps"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/pulpfake"
)

// builderVersion is part of the cache key: bump it whenever the way
// packages or repositories are built changes.
const builderVersion = "lab-repos/10" // 2: unit files and systemctl scriptlets; 3: modules.yaml, comps.xml; 4: units run under systemd; 5: doca-kernel-support, kernel-devel; 6: Rocky 8; 7: source-built x86_64 packages and their SRPMs; 8: -source repositories, BuildRequires; 9: kernel-devel of the host kernel; 10: AppStream's modulemd-defaults

// sourceDateEpoch fixes build times and file mtimes inside the RPMs.
const sourceDateEpoch = "1748779200" // 2025-06-01T12:00:00Z

// chunkSize is the most subpackages one rpmbuild run makes.
const chunkSize = 24

// Options configures Build.
type Options struct {
	// CacheDir holds everything built: the lab GPG key (CacheDir/gpg) and
	// one directory per recipe hash (CacheDir/repos-<hash>).
	CacheDir string
	Logf     func(format string, args ...any)
}

// Snapshot is one timestamped snapshot of one repository.
type Snapshot struct {
	Repo      string // key under dnf_repos_default and .repo section name
	PulpPath  string // e.g. "rocky/9.6/BaseOS/x86_64/os"
	Timestamp string // e.g. "20251106T211545"
	Dir       string // createrepo_c repository (repodata/ + Packages/)
	RepoFile  string // .repo file name without ".repo"
	RepoName  string // section name in RepoFile
	Vendor    bool   // a site's vendor repository (repoDef.Vendor)
	Major     string // the Rocky major it is for ("9", "8")
}

// BasePath is the Pulp distribution base path: PulpPath/Timestamp.
func (s Snapshot) BasePath() string { return s.PulpPath + "/" + s.Timestamp }

// Result describes built repositories.
type Result struct {
	Snapshots    []Snapshot
	GPGPublicKey []byte            // armored lab public key
	GPGKeyFiles  map[string][]byte // file name in /etc/pki/rpm-gpg -> key
	// BaseImageRPMs are the RPMs a fresh GenericCloud base image has
	// installed, by Rocky major (Rocky-9-GenericCloud-Base-9.6, ...-8.10)
	BaseImageRPMs  map[string][]string
	TimestampsYAML []byte              // dnf_repo_timestamps.yml pinning the newer snapshots
	Packages       map[string][]string // RL9's, by repository key
	Fingerprint    string              // of the lab key
	Hash           string              // recipe hash (cache key)
}

// Timestamps returns the older and newer snapshot timestamps.
func Timestamps() (older, newer string) { return OlderTimestamp, NewerTimestamp }

// Snapshot returns the RL9 snapshot of repo at timestamp ts.
func (r *Result) Snapshot(repo, ts string) (Snapshot, bool) {
	return r.SnapshotFor("9", repo, ts)
}

// SnapshotFor returns the snapshot of repo for Rocky major at timestamp ts.
func (r *Result) SnapshotFor(major, repo, ts string) (Snapshot, bool) {
	for _, s := range r.Snapshots {
		if s.Major == major && s.Repo == repo && s.Timestamp == ts {
			return s, true
		}
	}
	return Snapshot{}, false
}

// Distributions returns one pulpfake distribution per snapshot path (a
// repository both majors share, as grafana's, is one), all behind guard
// (nil: open) but the public vendor repositories'.
func Distributions(r *Result, guard *pulpfake.Guard) []pulpfake.Distribution {
	out := make([]pulpfake.Distribution, 0, len(r.Snapshots))
	seen := map[string]bool{}
	for _, s := range r.Snapshots {
		if seen[s.BasePath()] {
			continue
		}
		seen[s.BasePath()] = true
		g := guard
		if Public(s.Repo) {
			g = nil
		}
		out = append(out, pulpfake.Distribution{BasePath: s.BasePath(), Dir: s.Dir, Guard: g})
	}
	return out
}

// Public reports whether the repository key is a vendor's public one
// (doca, cuda), served without the content guard.
func Public(key string) bool {
	return slices.ContainsFunc(repoDefs, func(rd repoDef) bool { return rd.Key == key && rd.Public })
}

// VendorRepoFile is a .repo file for the public vendor snapshot s, as
// the vendor publishes one beside its repository (NVIDIA's
// cuda-rhel9.repo: section <file>-x86_64, gpgcheck on), its baseurl under
// contentURL. Stand-in: its gpgkey is the image's Rocky key file of the
// snapshot's major, which in the lab is the lab key signing the
// stand-ins (NVIDIA's names its own key's URL).
func VendorRepoFile(s Snapshot, contentURL string) []byte {
	return fmt.Appendf(nil, "[%[1]s-x86_64]\nname=%[1]s-x86_64\nbaseurl=%[2]s/%[3]s\nenabled=1\ngpgcheck=1\ngpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-%[4]s\n",
		s.RepoFile, strings.TrimRight(contentURL, "/"), s.BasePath(), s.Major)
}

// VendorRepoFilePath is where the lab serves the .repo file of the
// public vendor snapshot s: its repository's path (without the
// timestamp) under dir, as the vendor serves it beside the repository
// (NVIDIA's cuda/repos/rhel9/x86_64/cuda-rhel9.repo), so each major's
// has its own place.
func VendorRepoFilePath(dir string, s Snapshot) string {
	return strings.TrimRight(dir, "/") + "/" + s.PulpPath
}

// artifact is one RPM to build.
type artifact struct {
	def    pkgDef
	evr    string
	newer  bool // only in the newer snapshot
	bucket int
	file   string   // relative to the rpms dir
	src    bool     // the .src.rpm of def's source package (def.SRPM == def.Name)
	majors []string // the Rocky majors whose repositories hold it
}

// major is the Rocky major the artifact was made for first (its files
// name it: the release, key file names).
func (a *artifact) major() string { return a.majors[0] }

func (a *artifact) in(major string) bool { return slices.Contains(a.majors, major) }

// el8EVR rewrites a Rocky 9 EVR's el9 tags for Rocky 8.10.
var el8EVR = strings.NewReplacer("module+el9.6.0", "module+el8.10.0", ".el9_6", ".el8_10", ".el9_5", ".el8_10", ".el9_4", ".el8_10",
	".el9s", ".el8s", ".el9", ".el8")

// evrFor is a catalog EVR (Rocky 9's) as major's repositories carry it.
func evrFor(evr, major string) string {
	if major == "8" {
		return el8EVR.Replace(evr)
	}
	return evr
}

func (a *artifact) epoch() string {
	if e, _, ok := strings.Cut(a.evr, ":"); ok {
		return e
	}
	return ""
}

// vr is "version-release" without the epoch.
func (a *artifact) vr() string {
	if _, vr, ok := strings.Cut(a.evr, ":"); ok {
		return vr
	}
	return a.evr
}

func (a *artifact) version() string { v, _, _ := strings.Cut(a.vr(), "-"); return v }
func (a *artifact) release() string { _, r, _ := strings.Cut(a.vr(), "-"); return r }

func (a *artifact) subst(s string) string {
	return strings.NewReplacer("{evr}", a.evr, "{vr}", a.vr()).Replace(s)
}

// recipeHash is the cache key.
func recipeHash() string {
	h := sha256.New()
	json.NewEncoder(h).Encode(struct {
		V        string
		Repos    []repoDef
		Pkgs     []pkgDef
		Old, New string
		Keys     []string
		SDE      string
	}{builderVersion, repoDefs, catalog, OlderTimestamp, NewerTimestamp, GPGKeyFileNames, sourceDateEpoch})
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Build builds (or reuses from CacheDir) the lab repositories.
func Build(o Options) (*Result, error) {
	logf := o.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if o.CacheDir == "" {
		return nil, errors.New("repos: CacheDir is required")
	}
	cache, err := filepath.Abs(o.CacheDir)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	hash := recipeHash()
	final := filepath.Join(cache, "repos-"+hash)
	if r, err := loadResult(final); err == nil {
		logf("repos: reusing %s (%v)", final, time.Since(start).Round(time.Millisecond))
		return r, nil
	}
	if err := checkTools(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, err
	}
	removeStaleBuilds(cache)
	key, err := loadOrCreateKey(filepath.Join(cache, "gpg"), logf)
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp(cache, ".build-"+hash+"-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	r, err := buildInto(work, key, logf)
	if err != nil {
		return nil, err
	}
	r.Hash = hash
	if err := saveResult(work, r); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(filepath.Join(work, "build")); err != nil {
		return nil, err
	}
	if err := os.Rename(work, final); err != nil {
		// A concurrent Build finished first; use its result.
		if r2, err2 := loadResult(final); err2 == nil {
			return r2, nil
		}
		return nil, err
	}
	r, err = loadResult(final)
	if err != nil {
		return nil, err
	}
	logf("repos: built %d snapshots into %s in %v", len(r.Snapshots), final, time.Since(start).Round(time.Millisecond))
	return r, nil
}

// removeStaleBuilds deletes work directories of builds that died more
// than an hour ago (a running build is never that old).
func removeStaleBuilds(cache string) {
	dirs, _ := filepath.Glob(filepath.Join(cache, ".build-*"))
	for _, d := range dirs {
		if fi, err := os.Stat(d); err == nil && time.Since(fi.ModTime()) > time.Hour {
			os.RemoveAll(d)
		}
	}
}

func checkTools() error {
	for _, t := range []string{"rpmbuild", "rpmsign", "gpg", "gpgconf", "createrepo_c", "modifyrepo_c", "tar"} {
		if _, err := exec.LookPath(t); err != nil {
			return fmt.Errorf("repos: %s not found (install rpm, gnupg and createrepo-c)", t)
		}
	}
	return nil
}

// saveResult writes result.json with paths relative to dir, so the cache
// directory can be moved.
func saveResult(dir string, r *Result) error {
	rel := *r
	rel.Snapshots = slices.Clone(r.Snapshots)
	for i := range rel.Snapshots {
		p, err := filepath.Rel(dir, rel.Snapshots[i].Dir)
		if err != nil {
			return err
		}
		rel.Snapshots[i].Dir = p
	}
	rel.BaseImageRPMs = map[string][]string{}
	for major, rpms := range r.BaseImageRPMs {
		for _, f := range rpms {
			p, err := filepath.Rel(dir, f)
			if err != nil {
				return err
			}
			rel.BaseImageRPMs[major] = append(rel.BaseImageRPMs[major], p)
		}
	}
	data, err := json.MarshalIndent(&rel, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "result.json"), data, 0o644)
}

// readJSON decodes the JSON file at path into v: the record a cached
// build left next to what it built.
func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

func loadResult(dir string) (*Result, error) {
	var r Result
	if err := readJSON(filepath.Join(dir, "result.json"), &r); err != nil {
		return nil, err
	}
	for i := range r.Snapshots {
		r.Snapshots[i].Dir = filepath.Join(dir, r.Snapshots[i].Dir)
	}
	for _, rpms := range r.BaseImageRPMs {
		for i := range rpms {
			rpms[i] = filepath.Join(dir, rpms[i])
		}
	}
	return &r, nil
}

// artifacts lists every RPM to build, for every major: one whose EVR is
// the same on both (no el tag) is built once and in both majors'
// repositories. Packages with the same name go to different rpmbuild
// runs (buckets), as one spec cannot hold a subpackage name twice.
func artifacts() []*artifact {
	seen := map[string]int{}
	byFile := map[string]*artifact{}
	var out []*artifact
	add := func(d pkgDef, evr, major string, newer bool) {
		a := &artifact{def: d, evr: evr, newer: newer, majors: []string{major}}
		arts := []*artifact{a}
		if d.SRPM != "" { // built from its source package, not in a chunk
			a.file, a.bucket = fmt.Sprintf("%s-%s.%s.rpm", d.Name, a.vr(), srcArch), -1
			if d.SRPM == d.Name {
				arts = append(arts, &artifact{def: d, evr: evr, newer: newer, majors: []string{major}, bucket: -1, src: true,
					file: fmt.Sprintf("%s-%s.src.rpm", d.Name, a.vr())})
			}
		} else {
			a.file, a.bucket = fmt.Sprintf("%s-%s.noarch.rpm", d.Name, a.vr()), seen[d.Name]
			seen[d.Name]++
		}
		for _, a := range arts {
			if prev := byFile[a.file]; prev != nil {
				prev.majors = append(prev.majors, major)
				continue
			}
			byFile[a.file] = a
			out = append(out, a)
		}
	}
	for _, major := range Majors {
		for _, d := range catalog {
			if d.Major != "" && d.Major != major {
				continue
			}
			add(d, evrFor(d.EVR, major), major, false)
			if d.Update != "" {
				add(d, evrFor(d.Update, major), major, true)
			}
		}
	}
	return out
}

func buildInto(work string, key *signingKey, logf func(string, ...any)) (*Result, error) {
	arts := artifacts()
	rpmsDir := filepath.Join(work, "rpms")
	if err := os.MkdirAll(rpmsDir, 0o755); err != nil {
		return nil, err
	}

	// Group into chunks: one spec (and rpmbuild run) per chunk.
	var chunks [][]*artifact
	for b := 0; ; b++ {
		var bucket []*artifact
		for _, a := range arts {
			if a.bucket == b {
				bucket = append(bucket, a)
			}
		}
		if len(bucket) == 0 {
			break
		}
		for len(bucket) > 0 {
			n := min(chunkSize, len(bucket))
			chunks = append(chunks, bucket[:n])
			bucket = bucket[n:]
		}
	}

	srcs := sourceGroups(arts)
	t0 := time.Now()
	err := parallel(len(chunks)+len(srcs), func(i int) error {
		if i >= len(chunks) {
			j := i - len(chunks)
			return buildSource(filepath.Join(work, "build", fmt.Sprintf("source%02d", j)), srcs[j], key, rpmsDir)
		}
		return buildChunk(filepath.Join(work, "build", fmt.Sprintf("chunk%02d", i)), i, chunks[i], key, rpmsDir)
	})
	if err != nil {
		return nil, err
	}
	logf("repos: rpmbuild of %d packages in %d runs: %v", len(arts), len(chunks), time.Since(t0).Round(time.Millisecond))

	// Sign.
	t0 = time.Now()
	groups := make([][]string, len(chunks)+len(srcs))
	for i, chunk := range slices.Concat(chunks, srcs) {
		for _, a := range chunk {
			groups[i] = append(groups[i], filepath.Join(rpmsDir, a.file))
		}
	}
	if err := signAll(key, groups); err != nil {
		return nil, err
	}
	logf("repos: signed %d packages: %v", len(arts), time.Since(t0).Round(time.Millisecond))

	// Arrange snapshots and run createrepo_c.
	t0 = time.Now()
	r := &Result{
		GPGPublicKey: key.Public,
		GPGKeyFiles:  map[string][]byte{},
		Packages:     map[string][]string{},
		Fingerprint:  key.Fingerprint,
	}
	for _, n := range GPGKeyFileNames {
		r.GPGKeyFiles[n] = key.Public
	}
	var made []Snapshot // one per directory: a path both majors share is made once
	for _, rd := range repoDefs {
		for _, ts := range []string{OlderTimestamp, NewerTimestamp} {
			dir := filepath.Join(work, "pulp", filepath.FromSlash(rd.PulpPath), ts)
			snap := Snapshot{
				Repo: rd.Key, PulpPath: rd.PulpPath, Timestamp: ts, Dir: dir,
				RepoFile: rd.RepoFile, RepoName: rd.repoName(), Vendor: rd.Vendor, Major: rd.major(),
			}
			r.Snapshots = append(r.Snapshots, snap)
			if slices.ContainsFunc(made, func(s Snapshot) bool { return s.Dir == dir }) {
				continue
			}
			made = append(made, snap)
			for _, a := range arts {
				if a.def.Repo != rd.Key || !a.in(rd.major()) || (a.newer && ts == OlderTimestamp) {
					continue
				}
				dst := filepath.Join(dir, "Packages", strings.ToLower(a.def.Name[:1]), a.file)
				if err := linkOrCopy(filepath.Join(rpmsDir, a.file), dst); err != nil {
					return nil, err
				}
			}
		}
		if rd.major() != "9" {
			continue
		}
		names := map[string]bool{}
		for _, d := range catalog {
			if d.Repo == rd.Key && d.Major != "8" {
				names[d.Name] = true
			}
		}
		for n := range names {
			r.Packages[rd.Key] = append(r.Packages[rd.Key], n)
		}
		sort.Strings(r.Packages[rd.Key])
	}
	err = parallel(len(made), func(i int) error {
		s := made[i]
		if err := os.MkdirAll(s.Dir, 0o755); err != nil {
			return err
		}
		args := []string{"--quiet", "--no-database", "--workers", "1"}
		if comps := compsXML(s.Repo); comps != "" {
			f := filepath.Join(filepath.Dir(s.Dir), s.Timestamp+"-comps.xml")
			if err := os.WriteFile(f, []byte(comps), 0o644); err != nil {
				return err
			}
			args = append(args, "--groupfile", f)
		}
		cmd := exec.Command("createrepo_c", append(args, s.Dir)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("createrepo_c %s: %v: %s", s.Dir, err, out)
		}
		if mods := modulesYAML(s.Repo, arts, s.Timestamp == NewerTimestamp, s.Major); mods != "" {
			f := filepath.Join(filepath.Dir(s.Dir), s.Timestamp+"-modules.yaml")
			if err := os.WriteFile(f, []byte(mods), 0o644); err != nil {
				return err
			}
			cmd := exec.Command("modifyrepo_c", "--mdtype=modules", f, filepath.Join(s.Dir, "repodata"))
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("modifyrepo_c %s: %v: %s", s.Dir, err, out)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	logf("repos: createrepo_c of %d snapshots: %v", len(made), time.Since(t0).Round(time.Millisecond))

	r.BaseImageRPMs = map[string][]string{}
	for _, major := range Majors {
		for _, a := range arts {
			if a.def.Base && !a.newer && a.in(major) {
				r.BaseImageRPMs[major] = append(r.BaseImageRPMs[major], filepath.Join(rpmsDir, a.file))
			}
		}
	}

	// Keys sorted as in the appliance's generated file (each key's
	// versions in the table's order).
	sorted := slices.Clone(repoDefs)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Key < sorted[j].Key })
	tf := timestamps.New()
	for _, rd := range sorted {
		if rd.Vendor {
			continue // given to builds as repos entries of their own
		}
		tf.Put(timestamps.Entry{
			Repo: rd.Key, Version: rd.VersionOS, PulpPath: rd.PulpPath, PulpTimestamp: NewerTimestamp,
			RepoFile: rd.RepoFile, RepoName: rd.RepoName, GPGCheck: rd.GPGCheck,
		})
	}
	y, err := tf.Marshal()
	if err != nil {
		return nil, err
	}
	r.TimestampsYAML = append([]byte("# Lab repositories (generated by testworld/lab/repos); pins the newer snapshots.\n"), y...)
	return r, nil
}

// parallel runs f(0..n-1) on up to NumCPU workers and returns the first error.
func parallel(n int, f func(i int) error) error {
	workers := max(2, runtime.NumCPU())
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		next = make(chan int)
	)
	for w := 0; w < min(workers, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

func linkOrCopy(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// stagedFile is one file of a stand-in package.
type stagedFile struct {
	Path    string // absolute path in the package
	Data    string
	Mode    os.FileMode
	Symlink string // non-empty: a symlink to this target
	Config  bool   // %config(noreplace)
}

// files returns what a stand-in package installs. Paths are chosen so they
// do not exist on a Debian host (the lab VM's userland).
func (a *artifact) files(key *signingKey) []stagedFile {
	name := a.def.Name
	marker := stagedFile{
		Path: fmt.Sprintf("/usr/share/%s/%s.lab-standin", name, name),
		Data: fmt.Sprintf("%s-%s lab stand-in package\n", name, a.evr),
		Mode: 0o644,
	}
	var fs []stagedFile
	switch name {
	case "kernel":
		return nil // a meta package, as on Rocky 9
	case "kernel-core":
		return []stagedFile{{
			Path: fmt.Sprintf("/usr/lib/modules/%s.x86_64/vmlinuz", a.vr()),
			Data: fmt.Sprintf("lab stand-in kernel %s.x86_64\n", a.vr()), Mode: 0o644,
		}}
	case "rocky-release":
		fs = append(fs,
			stagedFile{Path: "/etc/rocky-release", Data: rockyRelease(a.version()), Mode: 0o644},
			stagedFile{Path: "/etc/system-release-cpe", Data: "cpe:/o:rocky:rocky:" + a.major() + "::baseos\n", Mode: 0o644},
			stagedFile{Path: "/etc/redhat-release", Symlink: "rocky-release"},
			stagedFile{Path: "/etc/system-release", Symlink: "rocky-release"},
		)
	case "kernel-devel":
		// installed side by side, as on Rocky: only files of its own
		// kernel, no shared marker (the host kernel's names its own
		// directory, hostKernelDevel)
		if len(a.def.Files) != 0 {
			return extraFiles(a.def.Files)
		}
		return []stagedFile{{
			Path: fmt.Sprintf("/usr/src/kernels/%s.x86_64/Makefile", a.vr()),
			Data: fmt.Sprintf("# lab stand-in kernel-devel %s.x86_64\n", a.vr()), Mode: 0o644,
		}}
	case "rocky-gpg-keys":
		fs = append(fs, stagedFile{Path: "/etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-" + a.major(), Data: string(key.Public), Mode: 0o644})
	case "epel-release":
		fs = append(fs,
			stagedFile{Path: "/etc/pki/rpm-gpg/RPM-GPG-KEY-EPEL-" + a.major(), Data: string(key.Public), Mode: 0o644},
			stagedFile{Path: "/etc/yum.repos.d/epel.repo", Data: epelRepo, Mode: 0o644, Config: true},
			stagedFile{Path: "/etc/yum.repos.d/epel-testing.repo", Data: epelTestingRepo, Mode: 0o644, Config: true},
			stagedFile{Path: "/etc/yum.repos.d/epel-cisco-openh264.repo", Data: epelOpenH264Repo, Mode: 0o644, Config: true},
		)
	}
	fs = append(fs, extraFiles(a.def.Files)...)
	for _, u := range a.def.Units {
		p := "/usr/lib/systemd/system/" + u
		if slices.ContainsFunc(fs, func(f stagedFile) bool { return f.Path == p }) {
			continue // the package's own unit, running a real daemon
		}
		fs = append(fs, stagedFile{Path: p, Data: unitFile(u, a), Mode: 0o644})
	}
	for _, l := range slices.Sorted(maps.Keys(a.def.Links)) {
		fs = append(fs, stagedFile{Path: l, Symlink: a.def.Links[l]})
	}
	for _, b := range a.def.Bins {
		script := versionScript(filepath.Base(b), a)
		switch filepath.Base(b) {
		case "grafana-cli":
			script = grafanaCLIScript(a)
		case "doca-kernel-support":
			script = strings.NewReplacer("@PKG@", a.def.Name, "@EVR@", a.evr, "@VERSION@", a.version()).Replace(docaKernelSupportStandIn)
		}
		fs = append(fs, stagedFile{Path: b, Data: script, Mode: 0o755})
	}
	return append(fs, marker)
}

// unitFile is a minimal unit that the VMs' systemd really runs: the stand-in
// binary prints its version and exits, and the unit stays active like the
// daemon it stands for.
func unitFile(unit string, a *artifact) string {
	start := "/usr/bin/true"
	if len(a.def.Bins) > 0 {
		start = a.def.Bins[0]
	}
	return fmt.Sprintf(`[Unit]
Description=%[1]s (lab stand-in from %[2]s-%[3]s)
After=network.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=%[4]s

[Install]
WantedBy=multi-user.target
`, strings.TrimSuffix(unit, ".service"), a.def.Name, a.evr, start)
}

// scriptlets are the package's %pre (its system user), %post and %preun,
// in Lua so that they add no dependency on /bin/sh (nothing in the lab's
// rpm database provides it) and cannot fail the transaction: pcall swallows everything, and where
// /usr/bin/systemctl is missing (a host --installroot) nothing happens.
// As with %systemd_post (presets) and %systemd_preun, %post enables only on
// first install (arg[2] == 1) and %preun disables only on erase (0), so an
// upgrade keeps whatever the admin chose.
func (a *artifact) scriptlets() string {
	const run = `local run = rpm.execute or function(...) return os.execute(table.concat({...}, " ")) end`
	var b strings.Builder
	if u := a.def.User; u != nil {
		// both fail (and are ignored) when the group or user exists: a
		// build that made them first keeps its IDs
		fmt.Fprintf(&b, "%%pre -n %s -p <lua>\n%s\npcall(run, \"/usr/sbin/groupadd\", \"-r\", %q)\n"+
			"pcall(run, \"/usr/sbin/useradd\", \"-r\", \"-g\", %q, \"-d\", %q, \"-s\", %q, \"-c\", %q, %q)\n\n",
			a.def.Name, run, u.Name, u.Name, u.Home, u.Shell, u.Comment, u.Name)
	}
	if len(a.def.Units) == 0 {
		return b.String()
	}
	var units []string
	for _, u := range a.def.Units {
		units = append(units, fmt.Sprintf("%q", u))
	}
	list := strings.Join(units, ", ")
	if a.def.EnableOnInstall {
		fmt.Fprintf(&b, "%%post -n %s -p <lua>\n%s\nif arg[2] == 1 then pcall(run, \"/usr/bin/systemctl\", \"enable\", %s) end\n\n",
			a.def.Name, run, list)
	}
	fmt.Fprintf(&b, "%%preun -n %s -p <lua>\n%s\nif arg[2] == 0 then pcall(run, \"/usr/bin/systemctl\", \"--no-reload\", \"disable\", \"--now\", %s) end\n\n",
		a.def.Name, run, list)
	return b.String()
}

func versionScript(prog string, a *artifact) string {
	return strings.NewReplacer("@PROG@", prog, "@PKG@", a.def.Name, "@EVR@", a.evr, "@VERSION@", a.version()).Replace(versionStandIn)
}

// grafanaCLIScript also fakes "grafana-cli [--pluginsDir D] plugins install ID [VERSION]".
func grafanaCLIScript(a *artifact) string {
	return strings.NewReplacer("@PKG@", a.def.Name, "@EVR@", a.evr, "@VERSION@", a.version()).Replace(grafanaCLIStandIn)
}

// The stand-in programs the packages install; @NAME@ placeholders are
// filled in per package. Files, so that shellcheck checks them.
var (
	//go:embed standins/version.sh
	versionStandIn string
	//go:embed standins/grafana-cli.sh
	grafanaCLIStandIn string
	//go:embed standins/doca-kernel-support.sh
	docaKernelSupportStandIn string
)

const epelRepo = `[epel]
name=Extra Packages for Enterprise Linux $releasever - $basearch
metalink=https://mirrors.fedoraproject.org/metalink?repo=epel-$releasever&arch=$basearch&infra=$infra&content=$contentdir
enabled=1
gpgcheck=1
countme=1
gpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-EPEL-$releasever

[epel-debuginfo]
name=Extra Packages for Enterprise Linux $releasever - $basearch - Debug
metalink=https://mirrors.fedoraproject.org/metalink?repo=epel-debug-$releasever&arch=$basearch&infra=$infra&content=$contentdir
enabled=0
gpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-EPEL-$releasever
gpgcheck=1

[epel-source]
name=Extra Packages for Enterprise Linux $releasever - $basearch - Source
metalink=https://mirrors.fedoraproject.org/metalink?repo=epel-source-$releasever&arch=$basearch&infra=$infra&content=$contentdir
enabled=0
gpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-EPEL-$releasever
gpgcheck=1
`

const epelTestingRepo = `[epel-testing]
name=Extra Packages for Enterprise Linux $releasever - Testing - $basearch
metalink=https://mirrors.fedoraproject.org/metalink?repo=testing-epel$releasever&arch=$basearch&infra=$infra&content=$contentdir
enabled=0
gpgcheck=1
countme=1
gpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-EPEL-$releasever
`

const epelOpenH264Repo = `[epel-cisco-openh264]
name=Extra Packages for Enterprise Linux $releasever openh264 (From Cisco) - $basearch
metalink=https://mirrors.fedoraproject.org/metalink?repo=epel-cisco-openh264-$releasever&arch=$basearch
type=rpm
enabled=1
gpgcheck=1
gpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-EPEL-$releasever
skip_if_unavailable=True
`

// buildChunk writes one spec with a subpackage per artifact and runs rpmbuild.
func buildChunk(dir string, idx int, arts []*artifact, key *signingKey, rpmsDir string) error {
	tree := filepath.Join(dir, "tree")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		return err
	}
	var spec bytes.Buffer
	fmt.Fprintf(&spec, `Name: lab-standins-%02d
Version: 1
Release: 1
Summary: Lab stand-in packages
License: MIT
BuildArch: noarch
%%define debug_package %%{nil}
%%define _build_id_links none

%%description
Stand-in packages for the Slurm appliance image-build lab.

%%install
mkdir -p %%{buildroot}
cp -a %s/. %%{buildroot}/

`, idx, tree)
	for _, a := range arts {
		fmt.Fprintf(&spec, "%%package -n %s\n", a.def.Name)
		if e := a.epoch(); e != "" {
			fmt.Fprintf(&spec, "Epoch: %s\n", e)
		}
		fmt.Fprintf(&spec, "Version: %s\nRelease: %s\nSummary: Lab stand-in for %s\nLicense: MIT\nAutoReqProv: no\n",
			a.version(), a.release(), a.def.Name)
		if err := a.writeSpec(&spec, tree, key); err != nil {
			return err
		}
	}
	specFile := filepath.Join(dir, "standins.spec")
	if err := os.WriteFile(specFile, spec.Bytes(), 0o644); err != nil {
		return err
	}
	if err := rpmbuild(dir, "-bb", specFile); err != nil {
		return fmt.Errorf("rpmbuild chunk %d: %w", idx, err)
	}
	for _, a := range arts {
		if err := os.Rename(filepath.Join(dir, "out", a.file), filepath.Join(rpmsDir, a.file)); err != nil {
			return fmt.Errorf("rpmbuild chunk %d: %w", idx, err)
		}
	}
	return nil
}

// rpmbuild runs rpmbuild mode (-bb, -ba) on specFile with dir's top (its
// SOURCES) and out (the packages, flat) directories, reproducibly. Without
// checking BuildRequires: the host's rpm database has none of the
// catalog's packages (a VM's rebuild installs them with dnf builddep).
func rpmbuild(dir, mode, specFile string) error {
	top := filepath.Join(dir, "top")
	cmd := exec.Command("rpmbuild", "--quiet", "--nodeps",
		"--define", "_topdir "+top,
		"--define", "_rpmdir "+filepath.Join(dir, "out"),
		"--define", "_srcrpmdir "+filepath.Join(dir, "out"),
		"--define", "_build_name_fmt %%{NAME}-%%{VERSION}-%%{RELEASE}.%%{ARCH}.rpm",
		"--define", "_buildhost lab.invalid",
		"--define", "use_source_date_epoch_as_buildtime 1",
		"--define", "clamp_mtime_to_source_date_epoch 1",
		mode, specFile)
	cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH="+sourceDateEpoch, "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}

// writeSpec writes a's dependencies, description, scriptlets and file
// list into spec (after its own header) and stages its files in tree.
func (a *artifact) writeSpec(spec *bytes.Buffer, tree string, key *signingKey) error {
	for _, req := range a.def.Requires {
		fmt.Fprintf(spec, "Requires: %s\n", a.subst(req))
	}
	for _, p := range a.def.Provides {
		fmt.Fprintf(spec, "Provides: %s\n", a.subst(p))
	}
	for _, r := range a.def.Recommends {
		fmt.Fprintf(spec, "Recommends: %s\n", a.subst(r))
	}
	fmt.Fprintf(spec, "%%description -n %s\nLab stand-in for the %s package (%s).\n\n", a.def.Name, a.def.Name, a.def.Repo)
	spec.WriteString(a.scriptlets())
	fmt.Fprintf(spec, "%%files -n %s\n%%defattr(-,root,root,-)\n", a.def.Name)
	for _, f := range a.files(key) {
		dst := filepath.Join(tree, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if f.Symlink != "" {
			if err := os.Symlink(f.Symlink, dst); err != nil {
				return err
			}
		} else if err := os.WriteFile(dst, []byte(f.Data), f.Mode); err != nil {
			return err
		} else if err := os.Chmod(dst, f.Mode); err != nil { // umask
			return err
		}
		if f.Config {
			fmt.Fprintf(spec, "%%config(noreplace) %s\n", f.Path)
		} else {
			fmt.Fprintf(spec, "%s\n", f.Path)
		}
	}
	spec.WriteString("\n")
	return nil
}

// modulesYAML is repo's modulemd v2 metadata for Rocky major: one
// document per module stream with the stream's packages in the snapshot
// as its artifacts.
func modulesYAML(repo string, arts []*artifact, newer bool, major string) string {
	streams := map[string][]string{}
	var order []string
	for _, a := range arts {
		if a.def.Repo != repo || a.def.Module == "" || (a.newer && !newer) || !a.in(major) {
			continue
		}
		if _, ok := streams[a.def.Module]; !ok {
			order = append(order, a.def.Module)
		}
		epoch := a.epoch()
		if epoch == "" {
			epoch = "0"
		}
		streams[a.def.Module] = append(streams[a.def.Module], fmt.Sprintf("%s-%s:%s.noarch", a.def.Name, epoch, a.vr()))
	}
	var b strings.Builder
	for i, m := range order {
		name, stream, _ := strings.Cut(m, ":")
		fmt.Fprintf(&b, `---
document: modulemd
version: 2
data:
  name: %[1]s
  stream: "%[2]s"
  version: %[3]d
  context: %[5]s
  arch: x86_64
  summary: %[1]s (lab stand-in)
  description: >-
    Lab stand-in for the %[4]s module stream.
  license:
    module: [MIT]
  dependencies:
  - buildrequires:
      platform: [el%[5]s]
    requires:
      platform: [el%[5]s]
  profiles:
    common:
      rpms: [%[1]s]
  artifacts:
    rpms:
`, name, stream, 9060020250601000000+i, m, major)
		for _, r := range streams[m] {
			fmt.Fprintf(&b, "    - %s\n", r)
		}
		b.WriteString("...\n")
	}
	if repo == "appstream" {
		b.WriteString(moduleDefaultsYAML(order, major))
	}
	return b.String()
}

// appstreamDefaultStreams are the default streams of Rocky's AppStream
// modules by major: RL8's are the oldest streams (not in the lab); RL9
// has none, its first versions being plain RPMs.
var appstreamDefaultStreams = map[string]map[string]string{"8": {"nodejs": "10", "ruby": "2.5"}}

// moduleDefaultsYAML is a modulemd-defaults document per module of
// streams (name:stream, in order), as Rocky's AppStream has them: each
// stream's default profile is common, and dnf needs one for a module
// spec without a profile (osc.ood's @nodejs:22).
func moduleDefaultsYAML(streams []string, major string) string {
	profiles := map[string][]string{}
	var order []string
	for _, m := range streams {
		name, stream, _ := strings.Cut(m, ":")
		if _, ok := profiles[name]; !ok {
			order = append(order, name)
		}
		profiles[name] = append(profiles[name], stream)
	}
	var b strings.Builder
	for _, name := range order {
		fmt.Fprintf(&b, "---\ndocument: modulemd-defaults\nversion: 1\ndata:\n  module: %s\n  modified: 202505010000\n", name)
		if d := appstreamDefaultStreams[major][name]; d != "" {
			fmt.Fprintf(&b, "  stream: \"%s\"\n", d)
		}
		b.WriteString("  profiles:\n")
		for _, s := range profiles[name] {
			fmt.Fprintf(&b, "    \"%s\": [common]\n", s)
		}
		b.WriteString("...\n")
	}
	return b.String()
}

// compsXML is repo's comps groups (by the packages' Comps names).
func compsXML(repo string) string {
	groups := map[string][]string{}
	var order []string
	for _, d := range catalog {
		if d.Repo != repo || d.Comps == "" {
			continue
		}
		if _, ok := groups[d.Comps]; !ok {
			order = append(order, d.Comps)
		}
		groups[d.Comps] = append(groups[d.Comps], d.Name)
	}
	if len(order) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE comps PUBLIC \"-//Red Hat, Inc.//DTD Comps info//EN\" \"comps.dtd\">\n<comps>\n")
	for _, g := range order {
		fmt.Fprintf(&b, "  <group>\n    <id>%s-desktop</id>\n    <name>%s</name>\n    <description>%s (lab stand-in)</description>\n    <default>false</default>\n    <uservisible>true</uservisible>\n    <packagelist>\n",
			strings.ToLower(g), g, g)
		for _, p := range groups[g] {
			fmt.Fprintf(&b, "      <packagereq type=\"mandatory\">%s</packagereq>\n", p)
		}
		b.WriteString("    </packagelist>\n  </group>\n")
	}
	b.WriteString("</comps>\n")
	return b.String()
}
