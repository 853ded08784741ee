package repos

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/internal/timestamps"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/pulpfake"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/vm"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
)

var (
	sharedCache string
	sharedOnce  sync.Once
	sharedRes   *Result
	sharedErr   error
	sharedCold  time.Duration
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "labrepos-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sharedCache = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func requireTools(t *testing.T, tools ...string) {
	t.Helper()
	needs.Tools(t, append([]string{"rpmbuild", "rpmsign", "gpg", "createrepo_c", "rpm"}, tools...)...)
}

// built returns the repositories built once (cold) for the whole package.
func built(t *testing.T) *Result {
	t.Helper()
	requireTools(t)
	sharedOnce.Do(func() {
		start := time.Now()
		sharedRes, sharedErr = Build(Options{CacheDir: sharedCache, Logf: t.Logf})
		sharedCold = time.Since(start)
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return sharedRes
}

// repomd is the part of repomd.xml the tests read.
type repomd struct {
	Revision string `xml:"revision"`
	Data     []struct {
		Type     string `xml:"type,attr"`
		Location struct {
			Href string `xml:"href,attr"`
		} `xml:"location"`
		Checksum string `xml:"checksum"`
	} `xml:"data"`
}

type primary struct {
	Count    int `xml:"packages,attr"`
	Packages []struct {
		Name    string `xml:"name"`
		Version struct {
			Epoch string `xml:"epoch,attr"`
			Ver   string `xml:"ver,attr"`
			Rel   string `xml:"rel,attr"`
		} `xml:"version"`
		Location struct {
			Href string `xml:"href,attr"`
		} `xml:"location"`
	} `xml:"package"`
}

func readPrimary(t *testing.T, dir string) primary {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "repodata", "repomd.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var md repomd
	if err := xml.Unmarshal(data, &md); err != nil {
		t.Fatalf("%s: repomd.xml: %v", dir, err)
	}
	types := map[string]string{}
	for _, d := range md.Data {
		types[d.Type] = d.Location.Href
	}
	for _, want := range []string{"primary", "filelists", "other"} {
		if types[want] == "" {
			t.Fatalf("%s: repomd.xml has no %s data: %s", dir, want, data)
		}
	}
	f, err := os.Open(filepath.Join(dir, filepath.FromSlash(types["primary"])))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rd io.Reader = f
	if strings.HasSuffix(types["primary"], ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		rd = zr
	}
	var p primary
	if err := xml.NewDecoder(rd).Decode(&p); err != nil {
		t.Fatalf("%s: primary: %v", dir, err)
	}
	return p
}

func TestSnapshotsHaveValidRepodata(t *testing.T) {
	r := built(t)
	older, newer := Timestamps()
	if len(r.Snapshots) != 2*len(repoDefs) {
		t.Fatalf("got %d snapshots, want %d", len(r.Snapshots), 2*len(repoDefs))
	}
	for _, s := range r.Snapshots {
		p := readPrimary(t, s.Dir)
		rpms, _ := filepath.Glob(filepath.Join(s.Dir, "Packages", "*", "*.rpm"))
		// the source repositories are empty (repoDef.Source), the others not
		source := strings.HasSuffix(s.Repo, "-source")
		if p.Count != len(p.Packages) || p.Count != len(rpms) || (p.Count == 0) != source {
			t.Errorf("%s: primary lists %d (%d), %d RPMs on disk", s.BasePath(), p.Count, len(p.Packages), len(rpms))
		}
		for _, pkg := range p.Packages {
			if _, err := os.Stat(filepath.Join(s.Dir, filepath.FromSlash(pkg.Location.Href))); err != nil {
				t.Errorf("%s: %v", s.BasePath(), err)
			}
		}
		if s.Timestamp != older && s.Timestamp != newer {
			t.Errorf("unexpected timestamp %q", s.Timestamp)
		}
		t.Logf("%-16s %-45s %s: %d packages", s.Repo, s.PulpPath, s.Timestamp, p.Count)
	}
	// The newer snapshot of baseos carries a newer kernel.
	sOld, _ := r.Snapshot("baseos", older)
	sNew, _ := r.Snapshot("baseos", newer)
	if len(readPrimary(t, sNew.Dir).Packages) <= len(readPrimary(t, sOld.Dir).Packages) {
		t.Error("newer baseos snapshot has no extra packages")
	}

	// The timestamps file parses and pins the newer snapshot of every repo.
	tf, err := timestamps.Parse(r.TimestampsYAML)
	if err != nil {
		t.Fatal(err)
	}
	for _, rd := range repoDefs {
		e, ok := tf.Lookup(rd.Key, map[string]string{"9": "9.6", "8": "8.10"}[rd.major()])
		if rd.Vendor {
			if ok {
				t.Errorf("vendor repository %s in the timestamps file", rd.Key)
			}
			continue
		}
		if !ok || e.PulpPath != rd.PulpPath || e.PulpTimestamp != newer || e.RepoFile != rd.RepoFile || e.RepoName != rd.RepoName {
			t.Errorf("timestamps entry for %s: %+v, %v", rd.Key, e, ok)
		}
	}
	for _, n := range []string{"RPM-GPG-KEY-Rocky-9", "RPM-GPG-KEY-EPEL-9", "RPM-GPG-KEY-OpenHPC-3"} {
		if !bytes.Equal(r.GPGKeyFiles[n], r.GPGPublicKey) {
			t.Errorf("GPGKeyFiles[%s] is not the lab key", n)
		}
	}
	for repo, names := range r.Packages {
		t.Logf("%s: %d package names", repo, len(names))
	}
}

// TestSignaturesAndHostPaths checks every RPM is signed by the lab key and
// installs nothing that already exists in the VM userland the stand-ins
// are installed over (a clash would make rpm refuse or replace the VM's
// own file). The host's own packages do not matter: VMs never see them
// (vm's TestHostDoesNotLeak).
func TestSignaturesAndHostPaths(t *testing.T) {
	r := built(t)
	cache, err := os.UserCacheDir() // the lab's default cache (lab.DefaultCacheDir; lab imports this package)
	if err != nil {
		cache = os.TempDir()
	}
	rootfs, err := vm.BuildRootFS(filepath.Join(cache, "fatimage-lab", "rootfs"), t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	db := t.TempDir()
	keyFile := filepath.Join(t.TempDir(), "key.asc")
	if err := os.WriteFile(keyFile, r.GPGPublicKey, 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, nil, "rpm", "--dbpath", db, "--import", keyFile)
	rpms, _ := filepath.Glob(filepath.Join(filepath.Dir(filepath.Dir(r.BaseImageRPMs["9"][0])), "rpms", "*.rpm"))
	if len(rpms) < 100 {
		t.Fatalf("only %d RPMs", len(rpms))
	}
	out := run(t, nil, "rpm", append([]string{"--dbpath", db, "-K"}, rpms...)...)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasSuffix(line, "digests signatures OK") {
			t.Errorf("rpm -K: %s", line)
		}
	}
	list := run(t, nil, "rpm", append([]string{"--dbpath", db, "-qlp", "--nosignature"}, rpms...)...)
	for _, p := range strings.Split(strings.TrimSpace(list), "\n") {
		if p == "(contains no files)" {
			continue
		}
		if _, err := os.Lstat(filepath.Join(rootfs, p)); err == nil {
			t.Errorf("stand-in file %s exists in the VM userland", p)
		}
		if strings.HasSuffix(p, "/os-release") {
			t.Errorf("a stand-in ships %s", p)
		}
	}

	// The base image has rocky-release and the older kernel.
	names := run(t, nil, "rpm", append([]string{"--dbpath", db, "-qp", "--nosignature", "--qf", "%{NAME}\n"}, r.BaseImageRPMs["9"]...)...)
	for _, want := range []string{"rocky-release", "kernel", "kernel-core", "glibc", "cockpit-ws"} {
		if !slices.Contains(strings.Fields(names), want) {
			t.Errorf("BaseImageRPMs lack %s: %s", want, names)
		}
	}
}

func TestSecondBuildIsFastAndSame(t *testing.T) {
	r1 := built(t)
	start := time.Now()
	r2, err := Build(Options{CacheDir: sharedCache, Logf: t.Logf})
	warm := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cold build %v, warm build %v", sharedCold.Round(time.Millisecond), warm.Round(time.Microsecond))
	if warm > 500*time.Millisecond {
		t.Errorf("warm build took %v", warm)
	}
	if !reflect.DeepEqual(r1, r2) {
		t.Error("warm build returned a different result")
	}
	if sums(t, r1) != sums(t, r2) {
		t.Error("checksums differ")
	}
}

// sums hashes every repomd.xml and RPM of a result.
func sums(t *testing.T, r *Result) string {
	t.Helper()
	var lines []string
	for _, s := range r.Snapshots {
		files, _ := filepath.Glob(filepath.Join(s.Dir, "Packages", "*", "*.rpm"))
		files = append(files, filepath.Join(s.Dir, "repodata", "repomd.xml"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			h := sha256.Sum256(data)
			lines = append(lines, hex.EncodeToString(h[:])+" "+f)
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func TestCatalog(t *testing.T) {
	have := map[string]bool{}
	for _, d := range catalog {
		have[d.Name] = true
	}
	have["python312"] = true // a Provides of python3.12
	have["python39"] = true  // a Provides of python3
	for _, n := range append(slices.Clone(FatPackages), RemovedPackages...) {
		if !have[n] {
			t.Errorf("%s is not in the catalog", n)
		}
	}
	// A package in two repositories (OpenHPC and its updates) ships the
	// same units either way, or an upgrade would lose a service.
	units := map[string]pkgDef{}
	for _, d := range catalog {
		if o, ok := units[d.Name]; ok && (!slices.Equal(o.Units, d.Units) || o.EnableOnInstall != d.EnableOnInstall) {
			t.Errorf("%s: units %v/%v in %s but %v/%v in %s", d.Name, o.Units, o.EnableOnInstall, o.Repo, d.Units, d.EnableOnInstall, d.Repo)
		}
		units[d.Name] = d
		if d.EnableOnInstall && len(d.Units) == 0 {
			t.Errorf("%s: EnableOnInstall without Units", d.Name)
		}
	}
	for name, unit := range map[string]string{"slurm-slurmctld-ohpc": "slurmctld.service", "munge": "munge.service",
		"firewalld": "firewalld.service", "sssd-common": "sssd.service", "grafana": "grafana-server.service"} {
		if !slices.Contains(units[name].Units, unit) {
			t.Errorf("%s lacks %s", name, unit)
		}
	}
}

func TestDistributions(t *testing.T) {
	r := built(t)
	g := &pulpfake.Guard{Users: map[string]string{"u": "p"}}
	ds := Distributions(r, g)
	// one per path: grafana's, TurboVNC's and TurboVNC-source's serve both majors
	if len(ds) != len(r.Snapshots)-6 {
		t.Fatalf("%d distributions for %d snapshots", len(ds), len(r.Snapshots))
	}
	for _, s := range r.Snapshots {
		want := g
		if slices.Contains([]string{"doca", "cuda"}, s.Repo) {
			want = nil // the vendors' own are open
		}
		if !slices.ContainsFunc(ds, func(d pulpfake.Distribution) bool {
			return d.BasePath == s.PulpPath+"/"+s.Timestamp && d.Dir == s.Dir && d.Guard == want
		}) {
			t.Errorf("no distribution for %+v", s)
		}
	}
	public := 0
	for _, d := range ds {
		if d.Guard == nil {
			public++
		}
	}
	if public != 8 {
		t.Errorf("%d open distributions, want doca's and cuda's two snapshots each, for RL9 and RL8", public)
	}
	for _, major := range Majors {
		cuda, _ := r.SnapshotFor(major, "cuda", NewerTimestamp)
		want := "[cuda-rhel" + major + "-x86_64]\nname=cuda-rhel" + major + "-x86_64\nbaseurl=http://pulp.example/pulp/content/cuda/repos/rhel" + major + "/x86_64/" + NewerTimestamp +
			"\nenabled=1\ngpgcheck=1\ngpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-" + major + "\n"
		if got := string(VendorRepoFile(cuda, "http://pulp.example/pulp/content/")); got != want {
			t.Errorf("RL%s cuda's .repo file:\n%s\nwant\n%s", major, got, want)
		}
		if got, want := VendorRepoFilePath("files/", cuda), "files/cuda/repos/rhel"+major+"/x86_64"; got != want {
			t.Errorf("RL%s cuda's .repo file served under %s, want %s", major, got, want)
		}
	}
}

// Rocky 8.10's repositories hold the catalog with el8 EVRs, RL8's own
// release, kernel and interpreters (python36's python3, python39), and
// nothing tagged el9; its base image RPMs are RL8's.
func TestRocky8Snapshots(t *testing.T) {
	r := built(t)
	_, newer := Timestamps()
	got := map[string]string{}
	for _, s := range r.Snapshots {
		if s.Major != "8" || s.Timestamp != newer {
			continue
		}
		for _, p := range readPrimary(t, s.Dir).Packages {
			if strings.Contains(p.Version.Rel, "el9") {
				t.Errorf("%s: %s-%s-%s", s.BasePath(), p.Name, p.Version.Ver, p.Version.Rel)
			}
			got[s.Repo+" "+p.Name] += " " + p.Version.Ver + "-" + p.Version.Rel
		}
	}
	for k, want := range map[string]string{
		"baseos rocky-release": " 8.10-1.9.el8", "baseos kernel-core": "4.18.0-553.81.1.el8_10", "appstream python36": "3.6.8-",
		"appstream python39": "3.9.20-", "extras epel-release": " 8-22.el8", "appstream podman": ".el8_10", "epel apptainer": ".el8",
		"OpenHPC-updates slurm-ohpc": "23.11.10-321.ohpc.3.2", "TurboVNC turbovnc": "3.0.1-20230811",
		"doca doca-ofed": " 3.2.3-1.el8", "doca mlnx-ofa_kernel": ".el8", "cuda nvidia-open": "610.60.02-1.el8",
		"cuda cuda-toolkit": "13.4.0-1",
	} {
		if !strings.Contains(got[k], want) {
			t.Errorf("el8 %s: %q, want %q in it", k, got[k], want)
		}
	}
	if got["baseos python3"] != "" || got["epel-cisco-openh264 openh264"] != "" {
		t.Errorf("el8 has RL9's python3 %q or openh264 %q", got["baseos python3"], got["epel-cisco-openh264 openh264"])
	}
	var base []string
	for _, f := range r.BaseImageRPMs["8"] {
		base = append(base, filepath.Base(f))
	}
	b := strings.Join(base, " ")
	if !strings.Contains(b, "rocky-release-8.10-1.9.el8.") || !strings.Contains(b, "python36-3.6.8") || strings.Contains(b, "el9") {
		t.Errorf("RL8 base image RPMs: %s", b)
	}
}

func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	out, err := runErr(env, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

func runErr(env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var buf bytes.Buffer
	cmd.Stdout = &buf
	cmd.Stderr = &buf
	err := cmd.Run()
	return buf.String(), err
}

// installroot is an isolated dnf/rpm root on the host.
type installroot struct {
	t        *testing.T
	root     string
	reposdir string
	cache    string
	env      []string
	server   *pulpfake.Server
	res      *Result
	major    string // the Rocky major of the root and its repositories
}

func newInstallroot(t *testing.T, r *Result, srv *pulpfake.Server) *installroot {
	t.Helper()
	base := t.TempDir()
	ir := &installroot{t: t, root: filepath.Join(base, "root"), reposdir: filepath.Join(base, "repos"),
		cache: filepath.Join(base, "cache"), server: srv, res: r, major: "9"}
	home := filepath.Join(base, "home")
	for _, d := range []string{ir.root, ir.reposdir, ir.cache, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Debian's rpm keeps its database in ~/.rpmdb; a private HOME with a
	// macro gives rpm and dnf the Rocky location inside the root.
	if err := os.WriteFile(filepath.Join(home, ".rpmmacros"), []byte("%_dbpath /var/lib/rpm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ir.env = []string{"HOME=" + home, "LC_ALL=C.UTF-8"}
	return ir
}

// writeRepos writes lab.repo with every repository at timestamp ts.
func (ir *installroot) writeRepos(ts, user, password string) {
	var b strings.Builder
	for _, s := range ir.res.Snapshots {
		if s.Timestamp != ts || s.Major != ir.major {
			continue
		}
		fmt.Fprintf(&b, "[%s]\nname = %s\nbaseurl = %s/%s\ngpgcheck = 1\nenabled = 1\nusername = %s\npassword = %s\n\n",
			s.RepoName, s.RepoName, ir.server.ContentURL(), s.BasePath(), user, password)
	}
	if err := os.WriteFile(filepath.Join(ir.reposdir, "lab.repo"), []byte(b.String()), 0o600); err != nil {
		ir.t.Fatal(err)
	}
}

func (ir *installroot) dnfArgs(args ...string) []string {
	return append([]string{
		"--installroot=" + ir.root, "--releasever=" + ir.major,
		"--setopt=reposdir=" + ir.reposdir, "--setopt=cachedir=" + ir.cache,
		"--disableplugin=local", "--setopt=install_weak_deps=False",
		"--setopt=skip_if_unavailable=False", "--setopt=metadata_expire=0", "-y",
	}, args...)
}

func (ir *installroot) dnf(args ...string) string {
	ir.t.Helper()
	start := time.Now()
	out := run(ir.t, ir.env, "dnf", ir.dnfArgs(args...)...)
	ir.t.Logf("dnf %s: %v", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	return out
}

func (ir *installroot) rpm(args ...string) string {
	ir.t.Helper()
	return run(ir.t, ir.env, "rpm", append([]string{"--root", ir.root}, args...)...)
}

// versions returns "name-version-release" of every installed copy of name.
func (ir *installroot) versions(name string) []string {
	ir.t.Helper()
	out, err := runErr(ir.env, "rpm", "--root", ir.root, "-q", "--qf", "%{NAME}-%{VERSION}-%{RELEASE}\n", name)
	if err != nil {
		return nil
	}
	v := strings.Fields(out)
	sort.Strings(v)
	return v
}

func startPulp(t *testing.T, r *Result, guard *pulpfake.Guard) *pulpfake.Server {
	t.Helper()
	srv := pulpfake.New(pulpfake.Options{})
	for _, d := range Distributions(r, guard) {
		srv.AddDistribution(d)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func TestDnfInstallAndUpgrade(t *testing.T) {
	requireTools(t, "dnf")
	r := built(t)
	older, newer := Timestamps()
	guard := &pulpfake.Guard{Users: map[string]string{"lab": "s3cret"}}
	srv := startPulp(t, r, guard)
	ir := newInstallroot(t, r, srv)

	keyFile := filepath.Join(t.TempDir(), "RPM-GPG-KEY-EPEL-9")
	if err := os.WriteFile(keyFile, r.GPGKeyFiles["RPM-GPG-KEY-EPEL-9"], 0o644); err != nil {
		t.Fatal(err)
	}
	// A fresh GenericCloud image: base RPMs installed, the lab key imported.
	ir.rpm("--import", keyFile)
	ir.rpm(append([]string{"-i"}, r.BaseImageRPMs["9"]...)...)
	if _, err := os.Stat(filepath.Join(ir.root, "var/lib/rpm")); err != nil {
		t.Fatalf("rpm database not at /var/lib/rpm in the root: %v", err)
	}
	kernelOld := ir.versions("kernel")
	releaseOld := ir.versions("rocky-release")
	if len(kernelOld) != 1 || len(releaseOld) != 1 {
		t.Fatalf("base image: kernel %v, rocky-release %v", kernelOld, releaseOld)
	}

	ir.writeRepos(older, "lab", "s3cret")
	ir.dnf(append([]string{"install"}, FatPackages...)...)
	ir.dnf(append([]string{"remove"}, RemovedPackages...)...)
	for _, name := range RemovedPackages {
		if v := ir.versions(name); len(v) != 0 {
			t.Errorf("%s still installed: %v", name, v)
		}
	}
	for _, name := range append([]string{"munge-libs", "ohpc-filesystem", "lua-filesystem", "python3.12", "git-core", "nodejs"},
		slices.DeleteFunc(slices.Clone(FatPackages), func(n string) bool { return n == "python312" || n == "python39" })...) {
		if len(ir.versions(name)) == 0 {
			t.Errorf("%s not installed", name)
		}
	}
	// Requires pull the OpenHPC-updates slurm, the newest in the older snapshot.
	if got := ir.versions("slurm-slurmctld-ohpc"); len(got) != 1 || !strings.Contains(got[0], "23.11.10-320") {
		t.Errorf("slurm-slurmctld-ohpc = %v", got)
	}
	// Unit files are installed; the scriptlets are Lua, so they neither
	// need /bin/sh nor fail where /usr/bin/systemctl is missing.
	for _, f := range []string{"usr/lib/systemd/system/firewalld.service", "usr/lib/systemd/system/slurmctld.service"} {
		if b, err := os.ReadFile(filepath.Join(ir.root, f)); err != nil || !strings.Contains(string(b), "WantedBy=multi-user.target") {
			t.Errorf("%s: %v %q", f, err, b)
		}
	}
	if s := ir.rpm("-q", "--scripts", "firewalld"); !strings.Contains(s, `"enable", "firewalld.service"`) || !strings.Contains(s, "postinstall scriptlet (using <lua>)") {
		t.Errorf("firewalld scriptlets:\n%s", s)
	}
	// grafana's system user, as the real package adds it (here in the
	// installroot, which has no useradd: the scriptlet fails quietly)
	if s := ir.rpm("-q", "--scripts", "grafana"); !strings.Contains(s, "preinstall scriptlet (using <lua>)") ||
		!strings.Contains(s, `"/usr/sbin/useradd", "-r", "-g", "grafana", "-d", "/usr/share/grafana", "-s", "/sbin/nologin"`) {
		t.Errorf("grafana scriptlets:\n%s", s)
	}
	grafanaOld := ir.versions("grafana")
	if _, err := os.Stat(filepath.Join(ir.root, "etc/yum.repos.d/epel.repo")); err != nil {
		t.Errorf("epel-release did not install epel.repo: %v", err)
	}
	for _, req := range srv.Requests() {
		if req.Username != "lab" || req.Status != 200 {
			t.Errorf("request %s %s: user %q status %d", req.Method, req.Path, req.Username, req.Status)
			break
		}
	}

	// Switch to the newer snapshots and update everything but grafana and apptainer.
	ir.writeRepos(newer, "lab", "s3cret")
	if out := ir.dnf("--refresh", "upgrade", "--exclude", "grafana", "--exclude", "apptainer"); strings.Contains(out, "Skipping packages") {
		t.Errorf("upgrade skipped packages:\n%s", out)
	}
	kernelNew := ir.versions("kernel")
	if len(kernelNew) != 2 || kernelNew[0] != kernelOld[0] || !strings.Contains(kernelNew[1], "570.58.1") {
		t.Errorf("kernel after upgrade: %v (before %v)", kernelNew, kernelOld)
	}
	if got := ir.versions("rocky-release"); len(got) != 1 || got[0] == releaseOld[0] {
		t.Errorf("rocky-release after upgrade: %v (before %v)", got, releaseOld)
	}
	if got := ir.versions("slurm-ohpc"); len(got) != 1 || !strings.Contains(got[0], "23.11.10-321") {
		t.Errorf("slurm-ohpc after upgrade: %v", got)
	}
	if got := ir.versions("grafana"); !reflect.DeepEqual(got, grafanaOld) {
		t.Errorf("grafana moved despite --exclude: %v -> %v", grafanaOld, got)
	}
	if got := ir.versions("apptainer"); len(got) != 1 || !strings.Contains(got[0], "1.4.1") {
		t.Errorf("apptainer moved despite --exclude: %v", got)
	}
	// Without the exclude, grafana would move.
	out, _ := runErr(ir.env, "dnf", ir.dnfArgs("--assumeno", "upgrade", "grafana")...)
	if !strings.Contains(out, "10.4.19") {
		t.Errorf("newer snapshot offers no grafana update:\n%s", out)
	}

	// needs-restarting -r reports a reboot after the kernel update.
	nr, err := runErr(ir.env, "dnf", ir.dnfArgs("needs-restarting", "-r")...)
	t.Logf("dnf needs-restarting -r: err=%v\n%s", err, nr)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("needs-restarting -r: want exit 1, got %v", err)
	}
}

func TestDnfWrongPassword(t *testing.T) {
	requireTools(t, "dnf")
	r := built(t)
	_, newer := Timestamps()
	srv := startPulp(t, r, &pulpfake.Guard{Users: map[string]string{"lab": "s3cret"}})
	ir := newInstallroot(t, r, srv)
	ir.writeRepos(newer, "lab", "wrong")
	out, err := runErr(ir.env, "dnf", ir.dnfArgs("makecache")...)
	if err == nil {
		t.Fatalf("dnf makecache with a wrong password succeeded:\n%s", out)
	}
	t.Logf("dnf with a wrong password says:\n%s", out)
	if !strings.Contains(out, "403") || !strings.Contains(out, "repomd.xml") {
		t.Errorf("expected a 403 on repomd.xml, got:\n%s", out)
	}
	forbidden := 0
	for _, req := range srv.Requests() {
		if req.Status == 403 {
			forbidden++
		}
	}
	if forbidden == 0 {
		t.Error("pulpfake answered no 403")
	}
}

// TestDnfRejectsWithoutKey proves gpgcheck is effective: without the lab
// key imported, dnf refuses the signed packages.
func TestDnfRejectsWithoutKey(t *testing.T) {
	requireTools(t, "dnf")
	r := built(t)
	_, newer := Timestamps()
	srv := startPulp(t, r, nil)
	ir := newInstallroot(t, r, srv)
	ir.writeRepos(newer, "lab", "unused")
	out, err := runErr(ir.env, "dnf", ir.dnfArgs("install", "munge")...)
	if err == nil {
		t.Fatalf("dnf installed without the key:\n%s", out)
	}
	t.Logf("dnf without the key says:\n%s", out)
	if !strings.Contains(out, "not installed") && !strings.Contains(out, "GPG") {
		t.Errorf("unexpected failure:\n%s", out)
	}
}

// TestModuleDefaultProfiles: a module spec without a profile, as
// osc.ood's "Install additional packages" gives dnf (@nodejs:22,
// @ruby:3.3), installs the stream's default profile, which AppStream's
// modulemd-defaults names; on RL9 no stream is a default (RHEL 9 ships
// its first versions as plain RPMs).
func TestModuleDefaultProfiles(t *testing.T) {
	requireTools(t, "dnf")
	r := built(t)
	_, newer := Timestamps()
	srv := startPulp(t, r, nil)
	for _, major := range Majors {
		t.Run("RL"+major, func(t *testing.T) {
			ir := newInstallroot(t, r, srv)
			ir.major = major
			keyFile := filepath.Join(t.TempDir(), "lab.key")
			if err := os.WriteFile(keyFile, r.GPGPublicKey, 0o644); err != nil {
				t.Fatal(err)
			}
			ir.rpm("--import", keyFile)
			ir.rpm(append([]string{"-i"}, r.BaseImageRPMs[major]...)...)
			ir.writeRepos(newer, "lab", "unused")

			list := ir.dnf("module", "list", "nodejs", "ruby")
			// common is the default profile; 22 and 3.3 are no default
			// streams (RL8's, 10 and 2.5, are not in the lab)
			want := map[string]string{"nodejs": `22\s+common \[d\]`, "ruby": `3\.3\s+common \[d\]`}
			for mod, re := range want {
				if !regexp.MustCompile(`(?m)^` + mod + `\s+` + re).MatchString(list) {
					t.Errorf("dnf module list: %s is not %s:\n%s", mod, re, list)
				}
			}
			out, err := runErr(ir.env, "dnf", ir.dnfArgs("install", "@nodejs:22", "@ruby:3.3")...)
			if err != nil {
				t.Fatalf("dnf install @nodejs:22 @ruby:3.3: %v\n%s", err, out)
			}
			for name, v := range map[string]string{"nodejs": "22.19.0-1.module+el" + major, "ruby": "3.3.8-3.module+el" + major} {
				if got := ir.versions(name); len(got) != 1 || !strings.Contains(got[0], v) {
					t.Errorf("%s installed: %v, want %s", name, got, v)
				}
			}
		})
	}
}
