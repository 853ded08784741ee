package sbom

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/repos"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
)

// queryScript is the provisioner's VM script the SBOM reads the image with.
const queryScript = "../../provisioner/fatimage/scripts/sbom.sh"

// labDB is an rpm database holding the lab's base image RPMs and the
// RPMs of one snapshot timestamp, as the lab builds them: rpm -U keeps
// the newest of each name, as dnf would install.
func labDB(t *testing.T, res *repos.Result, ts string) string {
	t.Helper()
	files := slices.Clone(res.BaseImageRPMs["9"])
	for _, s := range res.Snapshots {
		if s.Timestamp == ts && s.Major == "9" {
			m, _ := filepath.Glob(filepath.Join(s.Dir, "Packages", "*", "*.rpm"))
			files = append(files, m...)
		}
	}
	db := t.TempDir()
	args := append([]string{"--dbpath", db, "-U", "--justdb", "--nodeps", "--noscripts", "--nosignature", "--replacefiles", "--replacepkgs"}, files...)
	if out, err := exec.Command("rpm", args...).CombinedOutput(); err != nil {
		t.Fatalf("rpm -U --justdb: %v: %s", err, out)
	}
	return db
}

// query runs the provisioner's sbom_query against db: rpm on PATH is a
// shim adding --dbpath, dnf one that fails (no dnf history here).
func query(t *testing.T, db string) string {
	t.Helper()
	bin := t.TempDir()
	shims := map[string]string{"rpm": "#!/bin/sh\nexec /usr/bin/rpm --dbpath '" + db + "' \"$@\"\n", "dnf": "#!/bin/sh\nexit 1\n"}
	for name, body := range shims {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("sh", "-c", `. "$0" && sbom_query`, queryScript)
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sbom_query: %v", err)
	}
	return string(out)
}

// rpmQA is rpm's own answer: name -> sorted "epoch:version-release.arch".
func rpmQA(t *testing.T, db string) map[string][]string {
	t.Helper()
	out, err := exec.Command("rpm", "--dbpath", db, "-qa", "--qf", "%{NAME} %{EPOCHNUM}:%{VERSION}-%{RELEASE}.%{ARCH}\n").Output()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		n, evr, _ := strings.Cut(l, " ")
		m[n] = append(m[n], evr)
	}
	for _, v := range m {
		sort.Strings(v)
	}
	return m
}

func labRepos(t *testing.T) *repos.Result {
	t.Helper()
	needs.Tools(t, "rpm", "rpmbuild", "rpmsign", "gpg", "createrepo_c")
	res, err := repos.Build(repos.Options{CacheDir: filepath.Join(lab.DefaultCacheDir(), "repos"), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func imageOf(t *testing.T, db string) *Image {
	t.Helper()
	img := &Image{OSID: "rocky"}
	if err := img.ApplyQuery(query(t, db)); err != nil {
		t.Fatal(err)
	}
	return img
}

// TestQueryListsTheRPMDatabase: every package rpm -qa lists, with its
// epoch, version, release and arch, and nothing else.
func TestQueryListsTheRPMDatabase(t *testing.T) {
	older, _ := repos.Timestamps()
	db := labDB(t, labRepos(t), older)
	img := imageOf(t, db)
	got := map[string][]string{}
	for _, r := range img.RPMs {
		e := r.Epoch + ":" + r.Version + "-" + r.Release + "." + r.Arch
		got[r.Name] = append(got[r.Name], e)
		if r.License == "" {
			t.Errorf("%s: no license", r.Name)
		}
	}
	for _, v := range got {
		sort.Strings(v)
	}
	want := rpmQA(t, db)
	if len(img.RPMs) < 100 {
		t.Fatalf("only %d packages from the lab's database", len(img.RPMs))
	}
	for n, v := range want {
		if !slices.Equal(got[n], v) {
			t.Errorf("%s: query %v, rpm -qa %v", n, got[n], v)
		}
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			t.Errorf("%s: listed, but not in rpm -qa", n)
		}
	}
	// and the SBOM of the real database passes the CycloneDX 1.6 schema
	doc, err := CycloneDX(img, Tool{Name: "test"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if out, err := validate(t, doc); err != nil {
		t.Errorf("the CycloneDX 1.6 schema refuses the lab image's SBOM: %v\n%s", err, out)
	}
	if len(img.Users) == 0 || img.Users[0].Name != "root" {
		t.Errorf("users: %v, want root first", img.Users)
	}
}

// TestReportBetweenLabSnapshots: the report between images from the
// older and the newer snapshots names exactly the packages whose
// versions rpm lists differently, and an image against itself nothing.
func TestReportBetweenLabSnapshots(t *testing.T) {
	res := labRepos(t)
	older, newer := repos.Timestamps()
	dbOld, dbNew := labDB(t, res, older), labDB(t, res, newer)
	prev, cur := imageOf(t, dbOld), imageOf(t, dbNew)
	qaOld, qaNew := rpmQA(t, dbOld), rpmQA(t, dbNew)
	want := map[string]bool{}
	for n, v := range qaNew {
		if !slices.Equal(qaOld[n], v) {
			want[n] = true
		}
	}
	for n := range qaOld {
		if _, ok := qaNew[n]; !ok {
			want[n] = true
		}
	}
	if len(want) == 0 {
		t.Fatal("the lab's snapshots hold the same versions: nothing to test")
	}
	rep := Diff(prev, cur, "older.json")
	got := map[string]bool{}
	p := rep.Packages
	for _, c := range slices.Concat(p.Added, p.Removed, p.Upgraded, p.Downgraded) {
		got[c.Name[:strings.LastIndexByte(c.Name, '.')]] = true // name.arch
	}
	for n := range want {
		if !got[n] {
			t.Errorf("%s differs between the snapshots, the report does not name it", n)
		}
	}
	for n := range got {
		if !want[n] {
			t.Errorf("%s is reported, but rpm lists the same versions", n)
		}
	}
	if len(p.Upgraded) == 0 || len(p.Downgraded) != 0 {
		t.Errorf("older -> newer: %d upgraded, %d downgraded; want upgrades only", len(p.Upgraded), len(p.Downgraded))
	}
	if same := Diff(cur, cur, "self"); same.Changed() {
		t.Errorf("an image against itself: %s", same.Summary())
	}
	t.Log(rep.Summary())
	// and read back from the SBOM, the same report
	doc, err := CycloneDX(prev, Tool{Name: "test"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	if again := Diff(back, cur, "older.json"); again.Summary() != rep.Summary() {
		t.Errorf("from the SBOM:\n%s\nfrom the image:\n%s", again.Summary(), rep.Summary())
	}
}
