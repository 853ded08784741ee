package repos

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// WorkloadSpec is a generated repository whose size and shape stand for
// what a real fat image installs on top of its base (Slurm, Open OnDemand,
// monitoring and their dependencies): Packages RPMs of TotalBytes payload
// in all, reached from Tops top-level packages through Depth layers of
// Requires, each layer about twice the one above (as the Slurm and Open
// OnDemand sets fan out into libraries).
type WorkloadSpec struct {
	Packages   int
	TotalBytes int64
	Tops       int
	Depth      int
}

// RealWorkload is the figure the benchmarks use: a Rocky 9 fat Slurm
// appliance image adds about 1,000 packages and several hundred MB to the
// GenericCloud base (docs/benchmarks.md says where the numbers come from
// and how the machine's speed scales them).
var RealWorkload = WorkloadSpec{Packages: 1000, TotalBytes: 400 << 20, Tops: 20, Depth: 6}

// WorkloadRepo is a built workload repository.
type WorkloadRepo struct {
	Spec       WorkloadSpec
	PulpPath   string // e.g. "bench/workload/el9/x86_64"
	Timestamp  string
	Dir        string   // createrepo_c repository
	Tops       []string // install these to pull in every package
	Bytes      int64    // RPM files' total size
	Hash       string
	BuildTook  time.Duration // 0 when reused from the cache
	RepoFile   string
	RepoName   string
	PackageSet []string // every package name
}

// BasePath is the Pulp distribution base path.
func (w *WorkloadRepo) BasePath() string { return w.PulpPath + "/" + w.Timestamp }

const workloadVersion = "lab-workload/1"

func (s WorkloadSpec) hash() string {
	h := sha256.New()
	_ = json.NewEncoder(h).Encode(struct {
		V string
		S WorkloadSpec
		E string
	}{workloadVersion, s, sourceDateEpoch})
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// name of package i of layer d.
func wlName(d, i int) string {
	if d == 0 {
		return fmt.Sprintf("wl-top-%02d", i)
	}
	return fmt.Sprintf("wl-l%d-%04d", d, i)
}

// layers splits n packages into s.Depth layers of Tops, 2*Tops, ... with
// the last one taking the rest (never more than twice the one above, so
// every package is required by one above it).
func (s WorkloadSpec) layers() ([]int, error) {
	var sizes []int
	left := s.Packages
	size := s.Tops
	for d := 0; d < s.Depth && left > 0; d++ {
		n := min(size, left)
		if d == s.Depth-1 {
			n = left
		}
		if d > 0 && n > 2*sizes[d-1] {
			return nil, fmt.Errorf("workload: %d packages do not fit %d layers from %d tops", s.Packages, s.Depth, s.Tops)
		}
		sizes = append(sizes, n)
		left -= n
		size *= 2
	}
	return sizes, nil
}

// BuildWorkload builds (or reuses from cacheDir, under a content hash of
// the spec, with an flock so concurrent test binaries build it once) the
// workload repository, signed with the lab key.
func BuildWorkload(cacheDir string, s WorkloadSpec, logf func(string, ...any)) (*WorkloadRepo, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	cache, err := filepath.Abs(cacheDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, err
	}
	lock, err := os.OpenFile(filepath.Join(cache, "workload.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return nil, err
	}
	hash := s.hash()
	final := filepath.Join(cache, "workload-"+hash)
	if w, err := loadWorkload(final); err == nil {
		return w, nil
	}
	if err := checkTools(); err != nil {
		return nil, err
	}
	key, err := loadOrCreateKey(filepath.Join(cache, "gpg"), logf)
	if err != nil {
		return nil, err
	}
	_ = os.RemoveAll(final + ".tmp")
	work := final + ".tmp"
	start := time.Now()
	w, err := buildWorkload(work, s, key, logf)
	if err != nil {
		os.RemoveAll(work)
		return nil, err
	}
	w.Hash = hash
	w.BuildTook = time.Since(start)
	rel := *w
	rel.Dir = "repo"
	data, _ := json.MarshalIndent(&rel, "", "  ")
	if err := os.WriteFile(filepath.Join(work, "workload.json"), data, 0o644); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(filepath.Join(work, "build")); err != nil {
		return nil, err
	}
	if err := os.Rename(work, final); err != nil {
		return nil, err
	}
	w.Dir = filepath.Join(final, "repo")
	logf("workload: built %d packages (%d MiB) in %v", s.Packages, w.Bytes>>20, w.BuildTook.Round(time.Second))
	return w, nil
}

func loadWorkload(dir string) (*WorkloadRepo, error) {
	var w WorkloadRepo
	if err := readJSON(filepath.Join(dir, "workload.json"), &w); err != nil {
		return nil, err
	}
	w.Dir = filepath.Join(dir, w.Dir)
	w.BuildTook = 0
	return &w, nil
}

// wlChunk is how many packages one rpmbuild run makes.
const wlChunk = 100

func buildWorkload(work string, s WorkloadSpec, key *signingKey, logf func(string, ...any)) (*WorkloadRepo, error) {
	sizes, err := s.layers()
	if err != nil {
		return nil, err
	}
	type pkg struct {
		name     string
		requires []string
		bytes    int64
	}
	var pkgs []pkg
	// One package in ten is ten times the others' size, as a few
	// (compilers' runtimes, Java, OnDemand's Ruby and Node trees) are.
	rng := rand.New(rand.NewPCG(1, 2))
	units := int64(0)
	for d, n := range sizes {
		for i := range n {
			p := pkg{name: wlName(d, i)}
			if d+1 < len(sizes) {
				next := sizes[d+1]
				for _, j := range []int{(2 * i) % next, (2*i + 1) % next} {
					p.requires = append(p.requires, wlName(d+1, j))
				}
				// and one further down, as real dependency graphs are not trees
				if d+2 < len(sizes) {
					p.requires = append(p.requires, wlName(d+2, rng.IntN(sizes[d+2])))
				}
			}
			p.bytes = 1
			if rng.IntN(10) == 0 {
				p.bytes = 10
			}
			units += p.bytes
			pkgs = append(pkgs, p)
		}
	}
	unit := s.TotalBytes / units
	w := &WorkloadRepo{Spec: s, PulpPath: "bench/workload/el9/x86_64", Timestamp: NewerTimestamp,
		RepoFile: "bench-workload", RepoName: "bench-workload"}
	for i := 0; i < sizes[0]; i++ {
		w.Tops = append(w.Tops, wlName(0, i))
	}
	for _, p := range pkgs {
		w.PackageSet = append(w.PackageSet, p.name)
	}
	rpms := filepath.Join(work, "rpms")
	if err := os.MkdirAll(rpms, 0o755); err != nil {
		return nil, err
	}
	var chunks [][]pkg
	for len(pkgs) > 0 {
		n := min(wlChunk, len(pkgs))
		chunks = append(chunks, pkgs[:n])
		pkgs = pkgs[n:]
	}
	t0 := time.Now()
	err = parallel(len(chunks), func(c int) error {
		dir := filepath.Join(work, "build", fmt.Sprintf("chunk%02d", c))
		tree := filepath.Join(dir, "tree")
		var spec bytes.Buffer
		fmt.Fprintf(&spec, `Name: lab-workload-%02d
Version: 1
Release: 1
Summary: Lab workload packages
License: MIT
BuildArch: noarch
%%define debug_package %%{nil}
%%define _build_id_links none
%%define _binary_payload w.ufdio

%%description
Generated packages standing for a fat image's package set.

%%install
mkdir -p %%{buildroot}
cp -a %s/. %%{buildroot}/

`, c, tree)
		prng := rand.New(rand.NewPCG(uint64(c), 7))
		for _, p := range chunks[c] {
			f := filepath.Join(tree, "usr/share/lab-workload", p.name, "data.bin")
			if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
				return err
			}
			// random bytes: incompressible, as real payloads mostly are
			data := make([]byte, p.bytes*unit)
			for i := 0; i+8 <= len(data); i += 8 {
				v := prng.Uint64()
				for k := range 8 {
					data[i+k] = byte(v >> (8 * k))
				}
			}
			if err := os.WriteFile(f, data, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(&spec, "%%package -n %s\nVersion: 1.0\nRelease: 1.el9\nSummary: Workload package %s\nLicense: MIT\nAutoReqProv: no\n", p.name, p.name)
			for _, r := range p.requires {
				fmt.Fprintf(&spec, "Requires: %s\n", r)
			}
			fmt.Fprintf(&spec, "%%description -n %s\nGenerated.\n\n%%files -n %s\n%%defattr(-,root,root,-)\n/usr/share/lab-workload/%s\n\n", p.name, p.name, p.name)
		}
		specFile := filepath.Join(dir, "workload.spec")
		if err := os.WriteFile(specFile, spec.Bytes(), 0o644); err != nil {
			return err
		}
		cmd := exec.Command("rpmbuild", "--quiet",
			"--define", "_topdir "+filepath.Join(dir, "top"),
			"--define", "_rpmdir "+rpms,
			"--define", "_build_name_fmt %%{NAME}-%%{VERSION}-%%{RELEASE}.%%{ARCH}.rpm",
			"--define", "_buildhost lab.invalid",
			"--define", "use_source_date_epoch_as_buildtime 1",
			"--define", "clamp_mtime_to_source_date_epoch 1",
			"-bb", specFile)
		cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH="+sourceDateEpoch, "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("rpmbuild workload chunk %d: %v: %s", c, err, out)
		}
		return os.RemoveAll(tree)
	})
	if err != nil {
		return nil, err
	}
	logf("workload: rpmbuild of %d packages: %v", s.Packages, time.Since(t0).Round(time.Second))
	files, _ := filepath.Glob(filepath.Join(rpms, "*.rpm"))
	if len(files) != s.Packages {
		return nil, fmt.Errorf("workload: rpmbuild made %d packages, want %d", len(files), s.Packages)
	}
	var groups [][]string
	for lo := 0; lo < len(files); lo += wlChunk {
		groups = append(groups, files[lo:min(lo+wlChunk, len(files))])
	}
	if err := signAll(key, groups); err != nil {
		return nil, err
	}
	repo := filepath.Join(work, "repo")
	if err := os.MkdirAll(filepath.Join(repo, "Packages"), 0o755); err != nil {
		return nil, err
	}
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			return nil, err
		}
		w.Bytes += fi.Size()
		if err := os.Rename(f, filepath.Join(repo, "Packages", filepath.Base(f))); err != nil {
			return nil, err
		}
	}
	if out, err := exec.Command("createrepo_c", "--quiet", "--no-database", repo).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("createrepo_c: %v: %s", err, out)
	}
	if w.Bytes == 0 {
		return nil, errors.New("workload: empty")
	}
	return w, nil
}
