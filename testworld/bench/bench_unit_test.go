package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/pulpfake"
)

func TestParseCounts(t *testing.T) {
	sessions := "1.0\t10.0.0.1 40000 10.0.0.2 22\tid -un\n" +
		"1.1\t10.0.0.1 40000 10.0.0.2 22\tscp -vt /var/tmp/x\n" +
		"2.0\t10.0.0.1 40002 10.0.0.2 22\t/usr/lib/openssh/sftp-server\n\n"
	dnf := "123\t/usr/bin/dnf -y update\n456\t/tmp/ansible_dnf_payload.zip\n"
	c := ParseCounts(sessions, dnf)
	if c.Sessions != 3 || c.Connections != 2 || c.DNF != 2 {
		t.Errorf("%+v", c)
	}
	if c := ParseCounts("", ""); c.Sessions != 0 || c.DNF != 0 {
		t.Errorf("empty: %+v", c)
	}
}

func TestFloorScripts(t *testing.T) {
	r := Recording{Events: []Event{
		{Command: "id -un"},
		{Command: "umask 077 && mkdir -p '/var/tmp/w'"},
		{Path: "/var/tmp/w/01-update.sh", Data: []byte("dnf -y update\n")},
		{Command: "sudo -n sh -eu /var/tmp/w/01-update.sh"},
		{Command: bootIDCmd},
		{Path: "/var/tmp/w/02-reboot.sh", Data: []byte("nohup sh -c 'sleep 2; systemctl reboot || reboot' &\n")},
		{Command: "sudo -n sh -eu /var/tmp/w/02-reboot.sh"},
		{Command: bootIDCmd},
		{Command: "umask 077 && mkdir -p '/var/tmp/w'"},
		{Path: "/var/tmp/w/03-final.sh", Data: []byte("rm -rf /var/tmp/w\n")},
		{Command: "sudo -n sh -eu /var/tmp/w/03-final.sh"},
	}}
	s := r.FloorScripts()
	if len(s) != 2 {
		t.Fatalf("%d scripts", len(s))
	}
	if strings.Contains(s[0], "id -un") || strings.Contains(s[0], "boot_id") || strings.Contains(s[0], "02-reboot") ||
		!strings.HasSuffix(s[0], "sudo -n systemctl reboot\n") || !strings.Contains(s[0], "base64 -d > '/var/tmp/w/01-update.sh'") {
		t.Errorf("first script:\n%s", s[0])
	}
	if !strings.Contains(s[1], "mkdir -p") || !strings.Contains(s[1], "03-final.sh") || strings.Contains(s[1], "reboot") {
		t.Errorf("second script:\n%s", s[1])
	}
	// a script without a reboot stays one
	if got := (&Recording{Events: r.Events[:4]}).FloorScripts(); len(got) != 1 {
		t.Errorf("%d scripts without a reboot", len(got))
	}
}

// A command that read stdin (the provisioner's credentials) gets the same
// bytes on stdin when the floor replays it.
func TestFloorScriptsStdin(t *testing.T) {
	out := filepath.Join(t.TempDir(), "got")
	r := Recording{Events: []Event{{Command: "cat > " + out, Stdin: []byte("a tar of credentials\x00\n")}}}
	s := r.FloorScripts()
	if len(s) != 1 {
		t.Fatalf("%d scripts", len(s))
	}
	if b, err := exec.Command("sh", "-c", s[0]).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s\n%s", err, b, s[0])
	}
	if got, err := os.ReadFile(out); err != nil || string(got) != "a tar of credentials\x00\n" {
		t.Errorf("the replayed command read %q (%v)", got, err)
	}
}

func TestTableAndMedian(t *testing.T) {
	var b strings.Builder
	(&Table{Title: "T", Header: []string{"a", "bb"}, Rows: [][]string{{"xxx", "1"}}, Notes: []string{"n"}}).Print(&b)
	if want := "\n== T\na    bb\nxxx  1\n   n\n\n"; b.String() != want {
		t.Errorf("%q", b.String())
	}
	rs := []Result{{Wall: 3 * time.Second}, {Wall: time.Second}, {Wall: 2 * time.Second}}
	if m := median(rs); m.Wall != 2*time.Second {
		t.Errorf("median %s", m.Wall)
	}
	if m := MedianDuration([]time.Duration{4, 1, 3, 2}); m != 2 {
		t.Errorf("median %d", m)
	}
}

func TestPlaybook(t *testing.T) {
	for name, pb := range map[string][]byte{"fatimage.yml": Playbook, "expert.yml": ExpertPlaybook} {
		t.Run(name, func(t *testing.T) { checkPlaybook(t, pb) })
	}
}

func checkPlaybook(t *testing.T, pb []byte) {
	var plays []map[string]any
	if err := yaml.Unmarshal(pb, &plays); err != nil || len(plays) != 1 {
		t.Fatalf("%v (%d plays)", err, len(plays))
	}
	needs.Tools(t, "/usr/bin/ansible-playbook")
	dir := t.TempDir()
	f := filepath.Join(dir, "fatimage.yml")
	if err := os.WriteFile(f, pb, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hosts"), []byte("[build]\nvm ansible_host=127.0.0.1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/usr/bin/ansible-playbook", "--syntax-check", "-i", filepath.Join(dir, "hosts"), f)
	cmd.Env = append(os.Environ(), AnsibleEnv(dir)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

func TestProfileTasksAndGroups(t *testing.T) {
	out := "    openstack.lab: ===============================================================================\n" +
		"    openstack.lab: Gathering Facts --------------------------------------------------------- 1.50s\n" +
		"    openstack.lab: Update every package ------------------------------------------------ 12.25s\n" +
		"    openstack.lab: Reboot -------------------------------------------------------------- 30.00s\n" +
		"    openstack.lab: Fetch and check the monitoring binaries ----------------------------- 0.75s\n" +
		"    openstack.lab: Playbook run took 0 days, 0 hours, 0 minutes, 44 seconds\n"
	ps := ProfileTasks(out)
	if len(ps) != 4 || ps[1].Name != "Update every package" || ps[1].Took != 12250*time.Millisecond {
		t.Fatalf("%+v", ps)
	}
	g := Grouped(ps)
	if g["facts"] != 1500*time.Millisecond || g["reboot"] != 30*time.Second || g["binaries"] != 750*time.Millisecond ||
		g["packages (update, install, remove)"] != 12250*time.Millisecond {
		t.Errorf("%v", g)
	}
	for name, want := range map[string]string{
		"packages: update, install 12 package(s)": "packages (update, install, remove)",
		"repositories":           "repos and keys",
		"disabling repositories": "rest (services, plugins, cleanup, image.json)",
		"Grafana plugins, services, binaries and cleanup":      "rest (services, plugins, cleanup, image.json)",
		"Write and import the GPG keys, write every repo file": "repos and keys",
		"Create users with fixed ids":                          "users",
		"Check whether a reboot is needed":                     "reboot",
	} {
		if got := GroupOf(name); got != want {
			t.Errorf("GroupOf(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestProvisionerSteps(t *testing.T) {
	t0 := time.Now()
	lines := []Line{
		{t0, "==> lab: Connected to SSH!"},
		{t0.Add(time.Second), "==> lab: fatimage: repositories"},
		{t0.Add(3 * time.Second), "==> lab: fatimage: packages: update"},
		{t0.Add(4 * time.Second), "    lab: Installing..."},
		{t0.Add(10 * time.Second), "==> lab: Stopping server abc..."},
	}
	ps := ProvisionerSteps(lines)
	if len(ps) != 2 || ps[0].Took != 2*time.Second || ps[1].Name != "packages: update" || ps[1].Took != 7*time.Second {
		t.Errorf("%+v", ps)
	}
}

func TestEndStateDiff(t *testing.T) {
	a := &EndState{Packages: []string{"a-1", "b-1"}, Users: []string{"u:1:1:/h:/bin/sh"},
		Files: map[string]string{"etc/x": "file 0644 0:0 aa", "var/log/dnf.log": "file 0644 0:0 11", "var/lib/rpm/rpmdb.sqlite": "file 0644 0:0 1"}}
	b := &EndState{Packages: []string{"a-1", "b-2"}, Users: []string{"u:1:1:/h:/bin/sh"},
		Files: map[string]string{"etc/x": "file 0600 0:0 aa", "var/log/dnf.log": "file 0644 0:0 22", "etc/ssh/ssh_host_rsa_key": "file 0600 0:0 9", "etc/y": "deleted"}}
	d := a.Diff(b, EndStateAllowList)
	want := []string{"package only in the first: b-1", "package only in the second: b-2",
		"file differs: /etc/x (file 0644 0:0 aa vs file 0600 0:0 aa)", "file only in the second: /etc/y (deleted)"}
	if strings.Join(d, "\n") != strings.Join(want, "\n") {
		t.Errorf("diff:\n%s", strings.Join(d, "\n"))
	}
	if d := a.Diff(a, nil); len(d) != 0 {
		t.Errorf("self diff: %v", d)
	}
}

func TestFloorGoalRefusesImplausibleRatios(t *testing.T) {
	for r, want := range map[float64]string{
		0.32: "not judged",
		0.95: "goal <= 1.05: met",
		1.2:  "goal <= 1.05: NOT met",
	} {
		if got := floorGoal(r); !strings.Contains(got, want) {
			t.Errorf("floorGoal(%v) = %q, want it to say %q", r, got, want)
		}
	}
}

func TestStepSpanFromStampedLines(t *testing.T) {
	var w stampWriter
	fmt.Fprint(&w, "fatimage: image.json\nfatimage: sbom and ")
	if got := w.Lines(); len(got) != 1 || got[0].Text != "fatimage: image.json" {
		t.Fatalf("a partial line was stamped: %+v", got)
	}
	fmt.Fprint(&w, "change report\n")
	t0 := time.Now()
	lines := append(w.Lines(),
		Line{t0.Add(time.Second), "fatimage: changes: 3 upgraded"},
		Line{t0.Add(2 * time.Second), "fatimage: done: 1 dnf command(s), 0 reboot(s)"})
	lines[1].At = t0
	if d, ok := StepSpan(lines, sbomStepMark, afterSBOMMark); !ok || d != 2*time.Second {
		t.Errorf("span = %v, %v; want 2s (the changes lines are the step's own)", d, ok)
	}
	if _, ok := StepSpan(lines[:3], sbomStepMark, afterSBOMMark); ok {
		t.Error("a step without the next step's line was timed")
	}
	if _, ok := StepSpan(lines[2:], sbomStepMark, afterSBOMMark); ok {
		t.Error("a missing sbom step was timed")
	}
}

func TestStepTimesAndLargestGap(t *testing.T) {
	t0 := time.Now()
	at := func(s int, text string) Line { return Line{t0.Add(time.Duration(s) * time.Second), text} }
	without := []Line{at(0, "fatimage: repositories"), at(2, "fatimage: packages: update"), at(3, "  dnf output"),
		at(10, "fatimage: packages: install"), at(20, "fatimage: image.json"), at(21, "fatimage: done: 1 dnf command(s)")}
	with := []Line{at(0, "fatimage: repositories"), at(2, "fatimage: packages: update"), at(15, "fatimage: image.json"),
		at(16, "fatimage: sbom and change report"), at(17, "fatimage: changes: since x: 1 upgraded"), at(40, "fatimage: done: 1 dnf command(s)")}
	if m := StepTimes(without); m["packages"] != 18*time.Second || m["repositories"] != 2*time.Second || len(m) != 3 {
		t.Errorf("step times %v", m)
	}
	if n, g := largestGap(without, with); n != "" || g != 0 {
		t.Errorf("gap %q %v: only the sbom step grew", n, g)
	}
	with[1].At = t0.Add(-5 * time.Second) // packages now 20 s, 2 s more
	if n, g := largestGap(without, with); n != "packages" || g != 2*time.Second {
		t.Errorf("gap %q %v, want packages 2s", n, g)
	}
}

func TestRoundStacks(t *testing.T) {
	names := func(ss []Stack) string {
		var n []string
		for _, s := range ss {
			n = append(n, s.Name)
		}
		return strings.Join(n, ",")
	}
	for round, want := range []string{
		"fatimage,official+expert,official+appliance",
		"official+expert,fatimage", // the appliance-style playbook runs once
		"fatimage,official+expert",
	} {
		if got := names(roundStacks(Stacks, round)); got != want {
			t.Errorf("round %d: %s, want %s", round, got, want)
		}
	}
}

// benchRun is a whole build of wall seconds with the phases' seconds.
func benchRun(wall float64, phases ...float64) *stackRun {
	r := &stackRun{wall: time.Duration(wall * float64(time.Second))}
	for i, p := range phases {
		r.phases = append(r.phases, Phase{Name: phaseMarks[i].name, Took: time.Duration(p * float64(time.Second))})
	}
	return r
}

func TestMediansTakeEachFigureApart(t *testing.T) {
	m := mediansOf([]*stackRun{benchRun(100, 20, 65, 10, 5), benchRun(90, 30, 45, 12, 3), benchRun(95, 25, 50, -1, 4)})
	want := []time.Duration{25 * time.Second, 50 * time.Second, 10 * time.Second, 4 * time.Second}
	if m.Rounds != 3 || m.Wall != 95*time.Second || !slices.Equal(m.Phases, want) {
		t.Errorf("medians %+v, want wall 95s and phases %v", m, want)
	}
	if d := phaseMedian(2, []*stackRun{benchRun(1, 1, 1, -1)}); d != -1 {
		t.Errorf("a phase no run reached: %v", d)
	}
}

func TestWholeBuildNotesUseMedians(t *testing.T) {
	runs := map[string][]*stackRun{
		// ours: one unlucky boot draw (65 s) in three rounds
		"fatimage":           {benchRun(168, 25, 65, 41, 37), benchRun(150, 25, 45, 42, 38), benchRun(149, 26, 45, 40, 38)},
		"official+expert":    {benchRun(210, 28, 45, 98, 38), benchRun(215, 27, 50, 99, 39), benchRun(205, 28, 40, 97, 40)},
		"official+appliance": {benchRun(277, 24, 45, 163, 44)},
	}
	notes := strings.Join(wholeBuildNotes("realistic", runs), "\n")
	for _, want := range []string{
		"median wall: fatimage 150.00 s (3 rounds), official+expert 210.00 s (3 rounds), official+appliance 277.00 s (1 rounds)",
		"GOAL whole build (realistic): fatimage / official+expert = 0.714 (150.00 s / 210.00 s; goal <= 0.5: NOT met)",
		"GOAL provisioning phase (realistic): fatimage / official+expert = 0.418 (41.00 s / 98.00 s; goal <= 0.5: met)",
		"GOAL guest boot until SSH (realistic): fatimage / official = 1.000 (medians: 45.00 s of 3 builds / 45.00 s of 4 builds; goal <= 1.02: met)",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	rows := medianRows(runs)
	if len(rows) != 2 || strings.Join(rows[0][:7], " ") != "median of 3 fatimage 150.00 25.00 45.00 41.00 38.00" {
		t.Errorf("median rows %q", rows)
	}
}

func TestDownloadAgainstTheLinkFloor(t *testing.T) {
	out := "==> lab: Total                                           3.7 MB/s |  89 kB     00:00\n" +
		"==> lab: Total                                            45 MB/s | 406 MB     00:09\n"
	b, r, ok := dnfDownload(out)
	if !ok || b != 406<<20 || r != 45<<20 {
		t.Fatalf("dnfDownload = %v, %v, %v; want the larger download, 406 MiB at 45 MiB/s", b, r, ok)
	}
	note := downloadNote("realistic", pulpfake.Link{Delay: 20 * time.Millisecond, Rate: 50_000_000}, out)
	want := "GOAL RPM download over the link (fatimage, realistic): 47.2 MB/s = 94% of the link's 50 MB/s (426 MB, dnf's rounded figures; floor bytes ÷ rate = 8.51 s; goal >= 90%: met)"
	if note != want {
		t.Errorf("note\n%s\nwant\n%s", note, want)
	}
	if downloadNote("fast", pulpfake.Link{}, out) != "" || downloadNote("realistic", pulpfake.Link{Rate: 1}, "no download") != "" {
		t.Error("a note without a link or a download")
	}
}

func TestProvisioningByPhaseTakesMedians(t *testing.T) {
	steps := func(pkg float64) []Phase {
		return []Phase{{Name: "repositories", Took: time.Second}, {Name: "packages: update, 43 to install", Took: time.Duration(pkg * float64(time.Second))}}
	}
	tasks := func(pkg float64) []Phase {
		return []Phase{{Name: "Install every package set in one transaction", Took: time.Duration(pkg * float64(time.Second))}}
	}
	runs := map[string][]*stackRun{
		"fatimage":           {{steps: steps(33.5)}, {steps: steps(28)}, {steps: steps(29)}},
		"official+expert":    {{steps: tasks(29.9)}, {steps: tasks(31)}, {steps: tasks(30)}},
		"official+appliance": {{steps: tasks(36)}},
	}
	var b strings.Builder
	provisioningByPhase("realistic", runs).Print(&b)
	for _, want := range []string{
		"medians of 3, 3 and 1 rounds",
		"packages (update, install, remove)             29.00       30.00              0.97   36.00",
		"GOAL package phase (realistic): fatimage / official+expert = 0.967 (29.00 s / 30.00 s, medians; goal <= 1.0: met)",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

// The appliance resolution's table: each round beside its own fatimage
// build, and the medians each taken apart (the median resolution need
// not be the median build's round).
func TestApplianceCostTakesMedians(t *testing.T) {
	res := []*appliance.Result{
		{Duration: 12 * time.Second, Commit: "f49fc24abcdef0123", Environment: "/x/environments/overrides"},
		{Duration: 8 * time.Second, Commit: "f49fc24abcdef0123", Environment: "/x/environments/overrides"},
		{Duration: 10 * time.Second, Commit: "f49fc24abcdef0123", Environment: "/x/environments/overrides"},
	}
	builds := []time.Duration{150 * time.Second, 190 * time.Second, 170 * time.Second}
	tab, resolve, share := applianceCost("realistic", res, builds)
	if resolve != 10*time.Second || share != 10.0/180 {
		t.Errorf("median resolution %v, share %v; want 10s and 10/(170+10)", resolve, share)
	}
	if got := strings.Join(tab.Rows[1], " "); got != "2 8.00 190.00 4.0%" {
		t.Errorf("round 2: %q", got)
	}
	if got := strings.Join(tab.Rows[3], " "); got != "median of 3 10.00 170.00 5.6%" {
		t.Errorf("median row: %q", got)
	}
	notes := strings.Join(tab.Notes, "\n")
	if !strings.Contains(notes, "appliance f49fc24abcde, environment overrides:") || !strings.Contains(notes, "in 10.0s") {
		t.Errorf("notes do not say the median round's build line:\n%s", notes)
	}
}
