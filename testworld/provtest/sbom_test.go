package provtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"

	"github.com/stackhpc/packer-plugin-fatimage/provisioner/fatimage"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/repos"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/logtail"
)

// sbomRPMs are the rpm components of an SBOM as name-version-release.arch
// (the version holds the epoch, if any, as rpm -qa does not).
func sbomRPMs(t *testing.T, doc []byte) []string {
	t.Helper()
	var bom struct {
		SpecVersion string `json:"specVersion"`
		Components  []struct {
			Name       string `json:"name"`
			Version    string `json:"version"`
			Purl       string `json:"purl"`
			Properties []struct{ Name, Value string }
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &bom); err != nil || bom.SpecVersion != "1.6" {
		t.Fatalf("SBOM: spec %q, %v", bom.SpecVersion, err)
	}
	var out []string
	for _, c := range bom.Components {
		if !strings.HasPrefix(c.Purl, "pkg:rpm/rocky/") {
			continue
		}
		_, arch, _ := strings.Cut(c.Purl, "?arch=")
		arch, _, _ = strings.Cut(arch, "&")
		_, vr, _ := strings.Cut(c.Version, ":")
		if vr == "" {
			vr = c.Version
		}
		out = append(out, c.Name+"-"+vr+"."+strings.ReplaceAll(arch, "%28none%29", "(none)"))
	}
	sort.Strings(out)
	return out
}

// rpmQA is the VM's rpm -qa, one NVRA a line, sorted.
func rpmQA(t *testing.T, comm packersdk.Communicator) []string {
	l := strings.Split(run(t, comm, "rpm -qa --qf '%{NAME}-%{VERSION}-%{RELEASE}.%{ARCH}\\n' | LC_ALL=C sort"), "\n")
	sort.Strings(l)
	return l
}

// nameEVRs is name -> its version-releases in an NVRA listing.
func nameEVRs(l []string) map[string]string {
	m := map[string][]string{}
	for _, s := range l {
		rel := strings.LastIndexByte(s, '-')
		ver := strings.LastIndexByte(s[:rel], '-')
		m[s[:ver]] = append(m[s[:ver]], s[ver+1:])
	}
	out := map[string]string{}
	for k, v := range m {
		sort.Strings(v)
		out[k] = strings.Join(v, " ")
	}
	return out
}

// changedNames are the packages whose versions differ between two rpm -qa
// listings, or that only the first has.
func changedNames(qa1, qa2 []string) []string {
	before, after := nameEVRs(qa1), nameEVRs(qa2)
	var out []string
	for n, v := range after {
		if before[n] != v {
			out = append(out, n)
		}
	}
	for n := range before {
		if _, ok := after[n]; !ok {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// reportedNames are the package names a JSON change report lists.
func reportedNames(t *testing.T, file string) []string {
	t.Helper()
	var rep struct {
		Packages map[string][]struct {
			Name string `json:"name"`
		} `json:"packages"`
	}
	data, err := os.ReadFile(file)
	if err != nil || json.Unmarshal(data, &rep) != nil {
		t.Fatalf("report JSON: %v", err)
	}
	var got []string
	for _, l := range rep.Packages {
		for _, c := range l {
			got = append(got, c.Name[:strings.LastIndexByte(c.Name, '.')]) // name.arch
		}
	}
	sort.Strings(got)
	return slices.Compact(got)
}

// The SBOM of a lab build lists exactly what rpm -qa lists on the VM,
// and sits in the image for hcp-sbom; a second build from the newer
// snapshots, given the first's SBOM, reports exactly the packages whose
// versions changed, each with the repository dnf took it from.
func TestProvisionLabSBOM(t *testing.T) {
	ctx, _, comm := labVM(t, "fatimage-sbom", 15*time.Minute)
	t.Setenv("ARK_USERNAME", theLab.Env["ARK_USERNAME"])
	t.Setenv("ARK_PASSWORD", theLab.Env["ARK_PASSWORD"])
	dir := t.TempDir()
	older, newer := repos.Timestamps()
	raw := func(ts, name, previous string) map[string]any {
		return map[string]any{
			"repos": theLab.SnapshotRepos(ts),
			"gpg_keys": []any{map[string]any{
				"path": "/etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9", "key": string(theLab.Repos.GPGKeyFiles["RPM-GPG-KEY-Rocky-9"]),
			}},
			"skip_cleanup_steps":   []string{"ssh-host-keys", "login-ssh-keys", "resolv-conf"},
			"sbom_output":          filepath.Join(dir, name+".cdx.json"),
			"change_report_output": filepath.Join(dir, name+".md"),
			"previous_manifest":    previous,
		}
	}
	build := func(ts, name, previous string) (doc []byte, out string) {
		var p fatimage.Provisioner
		if err := p.Prepare(raw(ts, name, previous)); err != nil {
			t.Fatal(err)
		}
		var ui logtail.Buffer
		gen := map[string]any{"SourceImageName": "Rocky-9-GenericCloud-Base-9.6", "SourceImageID": "lab-base"}
		if err := p.Provision(ctx, &packersdk.BasicUi{Writer: &ui, ErrorWriter: &ui}, comm, gen); err != nil {
			t.Fatalf("%v\n%s", err, ui.String())
		}
		doc, err := os.ReadFile(filepath.Join(dir, name+".cdx.json"))
		if err != nil {
			t.Fatal(err)
		}
		return doc, ui.String()
	}
	doc1, out1 := build(older, "older", filepath.Join(dir, "none.cdx.json"))
	qa1 := rpmQA(t, comm)
	if got := sbomRPMs(t, doc1); !slices.Equal(got, qa1) {
		t.Errorf("SBOM lists %d packages, rpm -qa %d:\nSBOM %v\nrpm  %v", len(got), len(qa1), got, qa1)
	}
	if onVM := run(t, comm, "sudo cat /var/lib/image/sbom.cdx.json"); onVM != strings.TrimSpace(string(doc1)) {
		t.Error("/var/lib/image/sbom.cdx.json differs from sbom_output")
	}
	if !strings.Contains(out1, "no previous image to compare with") {
		t.Errorf("first build's output:\n%s", out1)
	}
	md1, _ := os.ReadFile(filepath.Join(dir, "older.md"))
	if !strings.Contains(string(md1), "### Packages added (") {
		t.Errorf("first report:\n%s", md1)
	}

	doc2, out2 := build(newer, "newer", filepath.Join(dir, "older.cdx.json"))
	qa2 := rpmQA(t, comm)
	want := changedNames(qa1, qa2)
	got := reportedNames(t, filepath.Join(dir, "newer.json"))
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("the report names %v\nrpm -qa differs in %v", got, want)
	}
	if !strings.Contains(out2, "fatimage: changes: since "+filepath.Join(dir, "older.cdx.json")+": ") {
		t.Errorf("second build's output has no change summary:\n%s", out2)
	}
	// dnf's history names the repository each update came from
	for _, n := range want {
		if !regexp.MustCompile(`"pkg:rpm/rocky/` + regexp.QuoteMeta(n) + `@[^"]*repository_id=`).Match(doc2) {
			t.Errorf("%s: updated by dnf, but its purl names no repository", n)
		}
	}
	t.Logf("%d packages changed between the snapshots: %v", len(want), want)
}
