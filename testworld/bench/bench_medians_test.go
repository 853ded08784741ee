package bench

import (
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/pulpfake"
)

// The realistic profile draws every simulated cloud transition with
// jitter (the guest's boot: 45 s ±30%, then the SDK dials SSH every 5 s,
// so a build waits for that draw rounded up to the next 5 s step). The
// stacks of one round meet the same draws (Cloud.SeedJitter), and whole
// builds are compared by medians over rounds, each figure on its own.

// roundStacks are the stacks of round (0-based) in the order they run:
// the ones marked Once only in the first round, and the start rotated
// each round so no stack always goes first.
func roundStacks(stacks []Stack, round int) []Stack {
	var in []Stack
	for _, s := range stacks {
		if round == 0 || !s.Once {
			in = append(in, s)
		}
	}
	out := make([]Stack, 0, len(in))
	for i := range in {
		out = append(out, in[(i+round)%len(in)])
	}
	return out
}

// stackMedians are a stack's figures over its rounds, each the median of
// its own values: a phase's median need not come from the run with the
// median wall time.
type stackMedians struct {
	Rounds int
	Wall   time.Duration
	Phases []time.Duration // as phaseMarks; -1 when no run had the phase
}

// mediansOf is the medians of runs; a phase a run did not reach (-1) is
// left out of that phase's median.
func mediansOf(runs []*stackRun) stackMedians {
	m := stackMedians{Rounds: len(runs), Phases: make([]time.Duration, len(phaseMarks))}
	var walls []time.Duration
	for _, r := range runs {
		walls = append(walls, r.wall)
	}
	m.Wall = MedianDuration(walls)
	for i := range m.Phases {
		m.Phases[i] = phaseMedian(i, runs)
	}
	return m
}

// phaseMedian is the median of phase i over runs (of one stack or
// several: the official builder's boot wait does not depend on the
// playbook), -1 when no run reached it.
func phaseMedian(i int, runs []*stackRun) time.Duration {
	var ds []time.Duration
	for _, r := range runs {
		if i < len(r.phases) && r.phases[i].Took >= 0 {
			ds = append(ds, r.phases[i].Took)
		}
	}
	if len(ds) == 0 {
		return -1
	}
	return MedianDuration(ds)
}

// medianRows are the table's median rows: one per stack run more than
// once, each figure its own median.
func medianRows(runs map[string][]*stackRun) [][]string {
	var rows [][]string
	for _, s := range Stacks {
		if len(runs[s.Name]) < 2 {
			continue
		}
		m := mediansOf(runs[s.Name])
		row := []string{"median of " + strconv.Itoa(m.Rounds), s.Name, secs(m.Wall)}
		for _, d := range m.Phases {
			row = append(row, secs(d))
		}
		rows = append(rows, append(row, "", "", ""))
	}
	return rows
}

// wholeBuildNotes are the whole-build goals, from each figure's median
// over the rounds (the official builder's boot wait pooled over both
// playbooks' runs: the playbook runs after it).
func wholeBuildNotes(profile string, runs map[string][]*stackRun) []string {
	ours, ex, ap := mediansOf(runs["fatimage"]), mediansOf(runs["official+expert"]), mediansOf(runs["official+appliance"])
	const prov, boot = 2, 1 // phaseMarks
	official := append(append([]*stackRun(nil), runs["official+expert"]...), runs["official+appliance"]...)
	ob := phaseMedian(boot, official)
	of := func(name string, m stackMedians) string {
		return fmt.Sprintf("%s %s s (%d rounds)", name, secs(m.Wall), m.Rounds)
	}
	return []string{
		fmt.Sprintf("median wall: %s, %s, %s", of("fatimage", ours), of("official+expert", ex), of("official+appliance", ap)),
		fmt.Sprintf("GOAL whole build (%s): fatimage / official+expert = %.3f (%s s / %s s; goal <= 0.5: %s)", profile, ratio(ours.Wall, ex.Wall), secs(ours.Wall), secs(ex.Wall), met(ratio(ours.Wall, ex.Wall) <= 0.5)),
		fmt.Sprintf("GOAL whole build (%s): fatimage / official+appliance = %.3f (%s s / %s s; no goal)", profile, ratio(ours.Wall, ap.Wall), secs(ours.Wall), secs(ap.Wall)),
		fmt.Sprintf("GOAL provisioning phase (%s): fatimage / official+expert = %.3f (%s s / %s s; goal <= 0.5: %s)", profile,
			ratio(ours.Phases[prov], ex.Phases[prov]), secs(ours.Phases[prov]), secs(ex.Phases[prov]), met(ratio(ours.Phases[prov], ex.Phases[prov]) <= 0.5)),
		fmt.Sprintf("provisioning phase: official+appliance %s s (fatimage / it = %.3f)", secs(ap.Phases[prov]), ratio(ours.Phases[prov], ap.Phases[prov])),
		fmt.Sprintf("GOAL guest boot until SSH (%s): fatimage / official = %.3f (medians: %s s of %d builds / %s s of %d builds; goal <= 1.02: %s)", profile,
			ratio(ours.Phases[boot], ob), secs(ours.Phases[boot]), ours.Rounds, secs(ob), len(official), met(ratio(ours.Phases[boot], ob) <= 1.02)),
		"guest boot until SSH: the official builder waits in the Packer SDK's loop, which dials every 5 s, so its figure is the boot the cloud drew rounded up to the next 5 s step; ours probes for sshd's identification line every 0.5 s before the SDK's first dial; the stacks of one round meet the same draws (the cloud's SeedJitter), other rounds others",
	}
}

// dnfTotalLine is dnf's summary of a download: "Total  90 MB/s | 406 MB
// 00:04" (dnf's k, M and G are powers of 1024).
var dnfTotalLine = regexp.MustCompile(`Total\s+([\d.]+) ?([kMG]?)B/s \|\s+([\d.]+) ?([kMG]?)B\s`)

// dnfDownload is the largest download dnf reported in out: its bytes and
// its rate in bytes per second, both as dnf rounded them.
func dnfDownload(out string) (bytes, rate float64, ok bool) {
	unit := map[string]float64{"": 1, "k": 1 << 10, "M": 1 << 20, "G": 1 << 30}
	for _, m := range dnfTotalLine.FindAllStringSubmatch(out, -1) {
		r, _ := strconv.ParseFloat(m[1], 64)
		b, _ := strconv.ParseFloat(m[3], 64)
		if b*unit[m[4]] > bytes {
			bytes, rate, ok = b*unit[m[4]], r*unit[m[2]], true
		}
	}
	return bytes, rate, ok
}

// downloadNote states the RPM download of ours over the profile's link
// against the floor, bytes ÷ rate; "" without a link or a download.
func downloadNote(profile string, link pulpfake.Link, out string) string {
	bytes, rate, ok := dnfDownload(out)
	if link.Rate <= 0 || !ok {
		return ""
	}
	share := rate / float64(link.Rate)
	return fmt.Sprintf("GOAL RPM download over the link (fatimage, %s): %.1f MB/s = %.0f%% of the link's %.0f MB/s (%.0f MB, dnf's rounded figures; floor bytes ÷ rate = %.2f s; goal >= 90%%: %s)",
		profile, rate/1e6, 100*share, float64(link.Rate)/1e6, bytes/1e6, bytes/float64(link.Rate), met(share >= 0.9))
}

// groupedMedians is each provisioning phase's median over runs: the
// provisioner's steps and profile_tasks' per-task times grouped alike.
func groupedMedians(runs []*stackRun) map[string]time.Duration {
	by := map[string][]time.Duration{}
	for _, r := range runs {
		g := Grouped(r.steps)
		for _, grp := range ProvisioningGroups {
			by[grp] = append(by[grp], g[grp])
		}
	}
	out := map[string]time.Duration{}
	for grp, ds := range by {
		out[grp] = MedianDuration(ds)
	}
	return out
}

// provisioningByPhase is the table of provisioning's phases, each the
// median over the rounds, with the package phase's goal against the
// expert playbook.
func provisioningByPhase(profile string, runs map[string][]*stackRun) *Table {
	g := []map[string]time.Duration{groupedMedians(runs["fatimage"]), groupedMedians(runs["official+expert"]), groupedMedians(runs["official+appliance"])}
	var rows [][]string
	for _, grp := range ProvisioningGroups {
		rows = append(rows, []string{grp, secs(g[0][grp]), secs(g[1][grp]), fmt.Sprintf("%.2f", ratio(g[0][grp], g[1][grp])), secs(g[2][grp])})
	}
	pk := ProvisioningGroups[2]
	r := ratio(g[0][pk], g[1][pk])
	return &Table{
		Title:  fmt.Sprintf("Provisioning by phase (medians of %d, %d and %d rounds; fatimage's step lines vs profile_tasks)", len(runs["fatimage"]), len(runs["official+expert"]), len(runs["official+appliance"])),
		Header: []string{"phase", "fatimage s", "official+expert s", "ratio", "official+appliance s"},
		Rows:   rows,
		Notes: []string{fmt.Sprintf("GOAL package phase (%s): fatimage / official+expert = %.3f (%s s / %s s, medians; goal <= 1.0: %s)",
			profile, r, secs(g[0][pk]), secs(g[1][pk]), met(r <= 1.0))},
	}
}
