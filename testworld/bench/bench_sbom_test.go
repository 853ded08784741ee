package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// sbomRun is one round's pair: the provisioner without and with the SBOM
// and change report, and the sbom step's time in the latter.
type sbomRun struct {
	without, with Result
	step          time.Duration
}

// BenchmarkSBOMCost measures issue 29's goal: generating the SBOM and the
// change report costs under 5% of the provisioning phase. Per round the
// provisioner runs the bench workload (control group plus, in the
// realistic profile, the generated repository) on two fresh VMs: without
// the SBOM options, then with sbom_output, change_report_output and
// previous_manifest naming the first run's manifest (a nightly's previous
// image). The step is timed from the provisioner's own output lines.
func BenchmarkSBOMCost(b *testing.B) {
	requireLab(b)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Minute)
	defer cancel()
	w := benchWorkload(b)
	key := NewKey(b)
	run := func(name string, extra map[string]any) (Result, int) {
		v := Boot(ctx, b, theLab, fmt.Sprintf("bench-sbom-%s-%d", name, time.Now().UnixNano()%1e6))
		defer v.Close()
		v.InstallCounters(b, key)
		r := RunProvisioner(ctx, b, v, w, nil, extra)
		return r, len(v.Packages(b))
	}
	var runs []sbomRun
	var rows [][]string
	for b.Loop() {
		for round := range rounds() {
			without, _ := run("without", nil)
			dir := b.TempDir()
			opts := map[string]any{
				"sbom_output":          filepath.Join(dir, "sbom.cdx.json"),
				"previous_manifest":    without.Manifest,
				"change_report_output": filepath.Join(dir, "changes.md"),
			}
			with, pkgs := run("with", opts)
			step, ok := StepSpan(with.Lines, sbomStepMark, afterSBOMMark)
			if !ok {
				b.Fatalf("round %d: no %q then %q line in the provisioner's output", round+1, sbomStepMark, afterSBOMMark)
			}
			checkSBOMOutputs(b, dir, pkgs)
			runs = append(runs, sbomRun{without: without, with: with, step: step})
			rows = append(rows,
				[]string{strconv.Itoa(round + 1), "without sbom options", secs(without.Wall), "-"},
				[]string{strconv.Itoa(round + 1), "with sbom + change report", secs(with.Wall), secs(step)})
		}
	}
	m := medianSBOMRun(runs)
	r := ratio(m.step, m.with.Wall)
	gapStep, gap := largestGap(m.without.Lines, m.with.Lines)
	t := Table{
		Title:  fmt.Sprintf("SBOM and change report cost (%s): the provisioning phase without and with sbom_output, previous_manifest, change_report_output", profileName()),
		Header: []string{"round", "provisioner", "provisioning s", "sbom step s"},
		Rows:   rows,
		Notes: []string{
			fmt.Sprintf("GOAL sbom + change report (%s): sbom step / provisioning phase = %.3f (%s s / %s s; goal < 0.05: %s)", profileName(), r, secs(m.step), secs(m.with.Wall), met(r < 0.05)),
			fmt.Sprintf("provisioning without the options %s s: with / without = %.3f (two VMs one after the other: the machine's load moves this more than the step does)", secs(m.without.Wall), ratio(m.with.Wall, m.without.Wall)),
			fmt.Sprintf("the step that grew most from without to with, the sbom step aside: %q, by %s s", gapStep, secs(gap)),
		},
	}
	t.Print(os.Stdout)
	b.ReportMetric(m.with.Wall.Seconds(), "provisioning-s")
	b.ReportMetric(m.without.Wall.Seconds(), "without-sbom-s")
	b.ReportMetric(m.step.Seconds(), "sbom-step-s")
	b.ReportMetric(r, "sbom/provisioning")
}

// medianSBOMRun is the round with the median step/provisioning ratio (the
// lower middle one of an even count).
func medianSBOMRun(runs []sbomRun) sbomRun {
	s := slices.Clone(runs)
	slices.SortFunc(s, func(a, b sbomRun) int {
		return cmp.Compare(ratio(a.step, a.with.Wall), ratio(b.step, b.with.Wall))
	})
	return s[(len(s)-1)/2]
}

// checkSBOMOutputs checks the run wrote what it was timed for: an SBOM
// listing at least the image's packages and both change reports.
func checkSBOMOutputs(b *testing.B, dir string, pkgs int) {
	b.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "sbom.cdx.json"))
	if err != nil {
		b.Fatal(err)
	}
	var doc struct {
		Components []json.RawMessage `json:"components"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		b.Fatalf("sbom_output: %v", err)
	}
	if len(doc.Components) < pkgs {
		b.Errorf("sbom_output lists %d components, the image has %d packages", len(doc.Components), pkgs)
	}
	for _, f := range []string{"changes.md", "changes.json"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			b.Errorf("change report %s missing or empty: %v", f, err)
		}
	}
}
