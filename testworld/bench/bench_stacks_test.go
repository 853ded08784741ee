package bench

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/buildtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/logtail"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
)

// stackRun is one whole build of one stack.
type stackRun struct {
	stack    Stack
	wall     time.Duration
	phases   []Phase
	steps    []Phase // provisioner steps or Ansible tasks
	state    *EndState
	secrets  int // secret hits in output, PACKER_LOG and the image's files
	files    int // image files scanned
	leftover int
	reboots  string
	dnf      string
	download string // ours: the RPM download against the link's floor (downloadNote)
}

// runStack runs one whole `packer build` of s and reads its image.
func runStack(b *testing.B, p *packertest.Packer, s Stack, w *Workload, round int) *stackRun {
	b.Helper()
	dir := b.TempDir()
	name := fmt.Sprintf("bench-stack-%s-%d-%d", strings.ReplaceAll(s.Name, "+", "-"), round, time.Now().UnixNano()%1e6)
	if err := s.WriteTemplate(theLab, w, dir, name); err != nil {
		b.Fatal(err)
	}
	before := theLab.Status().Total()
	bd := StartBuild(b, p, theLab, dir)
	bd.Wait(b, 60*time.Minute)
	out := bd.Output()
	if bd.Exit != 0 {
		b.Fatalf("%s: packer build exited %d:\n%s", s.Name, bd.Exit, logtail.Lines(out, 60))
	}
	r := &stackRun{stack: s, wall: bd.Wall(), phases: bd.Phases()}
	if s.Official() {
		r.steps = ProfileTasks(out)
		if len(r.steps) == 0 {
			b.Fatalf("%s: no profile_tasks figures in the output (is Debian's ansible package, with ansible.posix, installed?):\n%s", s.Name, logtail.Lines(out, 40))
		}
		r.reboots = ansibleTaskOutcome(out, "Reboot")
	} else {
		r.steps = ProvisionerSteps(bd.Lines())
		r.download = downloadNote(profileName(), theLab.Pulp.Link(), out)
		if m := regexp.MustCompile(`fatimage: done: (\d+) dnf command\(s\), (\d+) reboot\(s\)`).FindStringSubmatch(out); m != nil {
			r.dnf, r.reboots = m[1], m[2]
		}
	}
	list := buildtest.ListImages(b, theLab, name)
	if len(list) != 1 {
		b.Fatalf("%s: want one image named %s, got %d", s.Name, name, len(list))
	}
	upper := buildtest.ImageFiles(b, theLab, list[0].ID)
	st, err := ReadEndState(upper)
	if err != nil {
		b.Fatalf("%s: %v", s.Name, err)
	}
	r.state = st
	log, _ := os.ReadFile(bd.Log)
	r.secrets = SecretHits(theLab, []byte(out)) + SecretHits(theLab, log)
	hits, files, err := SecretHitsInTree(theLab, upper)
	if err != nil {
		b.Fatal(err)
	}
	r.secrets += hits
	r.files = files
	deleteImage(b, name)
	r.leftover = settledTotal(theLab) - before
	return r
}

// ansibleTaskOutcome is how the Ansible task named task ended: "ran",
// "skipped" or "" when it did not run.
func ansibleTaskOutcome(out, task string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if !strings.Contains(l, "TASK ["+task+"]") {
			continue
		}
		for _, n := range lines[i+1:] {
			switch {
			case strings.Contains(n, "skipping:"):
				return "0 (skipped)"
			case strings.Contains(n, "changed:"), strings.Contains(n, "ok:"):
				return "1"
			case strings.Contains(n, "TASK ["):
				return ""
			}
		}
	}
	return ""
}

// BenchmarkWholeBuild runs whole `packer build`s of the fat image side by
// side on the lab: ours (fatimage-openstack + fatimage) against today's
// stack (the official openstack builder + the official ansible
// provisioner) running the expert-tuned and the appliance-style playbook.
// Same source image, snapshots and package sets; the images' end states
// (rpm -qa, users, groups, every file the build wrote) must match but for
// EndStateAllowList, or the benchmark fails.
func BenchmarkWholeBuild(b *testing.B) {
	requireLab(b)
	p := packertest.Setup(b)
	InstallOfficial(b, p)
	w := benchWorkload(b)
	site := applianceSite(b)
	runs := map[string][]*stackRun{}
	var rows [][]string
	var resolves []*appliance.Result
	for b.Loop() {
		for round := range rounds() {
			for _, s := range roundStacks(Stacks, round) {
				// every stack of a round meets the same cloud: the same
				// draw for each transition (the guest's boot above all)
				theLab.Cloud.SeedJitter(uint64(round + 1))
				r := runStack(b, p, s, w, round)
				runs[s.Name] = append(runs[s.Name], r)
				row := []string{strconv.Itoa(round + 1), s.Name, secs(r.wall)}
				for _, ph := range r.phases {
					row = append(row, secs(ph.Took))
				}
				rows = append(rows, append(row, r.reboots, strconv.Itoa(r.secrets), strconv.Itoa(r.leftover)))
			}
			resolves = append(resolves, resolveAppliance(b, theLab, site))
		}
	}
	// The end states: every image against ours of the first round.
	ref := runs["fatimage"][0].state
	var eq []string
	for _, s := range Stacks {
		for i, r := range runs[s.Name] {
			if d := ref.Diff(r.state, EndStateAllowList); len(d) > 0 {
				b.Errorf("%s round %d: its image differs from fatimage's beyond the allow-list:\n  %s", s.Name, i+1, strings.Join(d, "\n  "))
			}
		}
		eq = append(eq, fmt.Sprintf("%s %d packages, %d users, %d files", s.Name, len(runs[s.Name][0].state.Packages), len(runs[s.Name][0].state.Users), len(runs[s.Name][0].state.Files)))
	}
	med := func(name string) *stackRun {
		rs := append([]*stackRun(nil), runs[name]...)
		sort.Slice(rs, func(i, j int) bool { return rs[i].wall < rs[j].wall })
		return rs[(len(rs)-1)/2]
	}
	ours, ex, ap := med("fatimage"), med("official+expert"), med("official+appliance")
	header := []string{"round", "stack", "wall s"}
	for _, m := range phaseMarks {
		header = append(header, m.name+" s")
	}
	header = append(header, "reboots", "secret hits", "resources left")
	profile := profileName()
	t := Table{
		Title:  fmt.Sprintf("Whole packer build (profile %s): fatimage-openstack + fatimage vs official openstack + ansible", profile),
		Header: header,
		Rows:   append(rows, medianRows(runs)...),
		Notes: append(wholeBuildNotes(profile, runs),
			fmt.Sprintf("GOAL dnf commands per fat build (fatimage) = %s (goal <= 2: %s)", ours.dnf, met(atoi(ours.dnf) <= 2 && ours.dnf != "")),
			fmt.Sprintf("GOAL reboots of a fat build without kernel-dependent steps (fatimage) = %s (goal 0: %s); the expert playbook rebooted: %s",
				ours.reboots, met(ours.reboots == "0"), ex.reboots),
			fmt.Sprintf("end states equal but for the allow-list (%d entries): %s", len(EndStateAllowList), strings.Join(eq, "; "))),
	}
	if ours.download != "" {
		t.Notes = append(t.Notes, ours.download)
	}
	t.Print(os.Stdout)
	provisioningByPhase(profile, runs).Print(os.Stdout)
	printSteps(ours, ex, ap)
	var al [][]string
	for _, a := range EndStateAllowList {
		al = append(al, []string{"/" + a.Pattern, a.Why})
	}
	(&Table{Title: "End-state allow-list: where the images may differ, and why", Header: []string{"path", "why"}, Rows: al}).Print(os.Stdout)
	printApplianceCost(b, profile, resolves, runs["fatimage"])
	b.ReportMetric(ours.wall.Seconds(), "fatimage-s")
	b.ReportMetric(ex.wall.Seconds(), "official-expert-s")
	b.ReportMetric(ap.wall.Seconds(), "official-appliance-s")
	b.ReportMetric(ratio(ours.wall, ex.wall), "fatimage/official-expert")
}

// benchWorkload is the control group's job plus, unless BENCH_WORKLOAD=lab,
// the generated realistic repository.
func benchWorkload(b *testing.B) *Workload {
	b.Helper()
	w, err := NewWorkload(theLab, "control")
	if err != nil {
		b.Fatal(err)
	}
	if spec, ok := WorkloadSpec(); ok {
		start := time.Now()
		if err := w.AddRealistic(theLab, labtest.CacheDir(), spec, b.Logf); err != nil {
			b.Fatal(err)
		}
		r := w.Realistic
		fmt.Printf("\n== Workload: the control group's sets plus a generated repository of %d packages, %.0f MiB of RPMs, %d top-level packages, %d layers of Requires (%s; %s)\n",
			r.Spec.Packages, float64(r.Bytes)/(1<<20), len(r.Tops), r.Spec.Depth,
			map[bool]string{true: "built in " + time.Since(start).Round(time.Second).String(), false: "from the cache"}[r.BuildTook > 0], r.Hash)
		if l := theLab.Pulp.Link(); l.Rate > 0 {
			fmt.Printf("   the VMs' link to the Pulp double (profile %s): %s each way, %.0f MB/s per VM; the RPMs' download floor is bytes ÷ rate = %d B ÷ %.0f MB/s = %.2f s\n",
				profileName(), l.Delay, float64(l.Rate)/1e6, r.Bytes, float64(l.Rate)/1e6, float64(r.Bytes)/float64(l.Rate))
		}
		fmt.Println()
	}
	return w
}

// printSteps prints the steps or tasks of each run (the median runs).
func printSteps(runs ...*stackRun) {
	for _, r := range runs {
		var tr [][]string
		for _, s := range r.steps {
			name := s.Name
			if len(name) > 72 {
				name = name[:69] + "..."
			}
			tr = append(tr, []string{name, secs(s.Took), GroupOf(s.Name)})
		}
		(&Table{Title: "Steps of " + r.stack.Name + " (median run)", Header: []string{"step or task", "s", "phase"}, Rows: tr}).Print(os.Stdout)
	}
}

// printApplianceCost prints the appliance resolution's table beside the
// fatimage whole builds and reports its figures.
func printApplianceCost(b *testing.B, profile string, res []*appliance.Result, ours []*stackRun) {
	var builds []time.Duration
	for _, r := range ours {
		builds = append(builds, r.wall)
	}
	t, resolve, share := applianceCost(profile, res, builds)
	t.Print(os.Stdout)
	b.ReportMetric(resolve.Seconds(), "appliance-resolve-s")
	b.ReportMetric(share, "appliance-resolve/build")
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}
