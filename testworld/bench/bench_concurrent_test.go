package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/buildtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/logtail"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
)

// majorBuild is one of our fat builds: the e2e suite's own templates
// (TestFatBuild's RL9 control node, TestFatBuildRocky8's RL8 groups), so
// the benchmark times builds whose images the e2e suite checks.
type majorBuild struct {
	name      string
	templates []string
	vars      func(image string) map[string]any
}

var majorBuilds = []majorBuild{
	{"RL9", []string{buildtest.FatCommonName, "fat-basic.pkr.hcl", "playbooks"}, func(image string) map[string]any {
		return map[string]any{"image_name": image, "binary_sha256": theLab.BinaryChecksums()}
	}},
	{"RL8", []string{buildtest.FatCommonName, "fat-rl8.pkr.hcl"}, func(image string) map[string]any {
		return map[string]any{"image_name": image, "source_image_name": lab.BaseImage8Name, "releases_url": theLab.Releases.URL()}
	}},
}

// pluginPrefix names the plugin's executable as `packer plugins install`
// lays it out (packer-plugin-fatimage_v<version>_x5.0_linux_amd64).
const pluginPrefix = "packer-plugin-fatimage"

// majorRun is one build of a majorBuild and its plugin processes' memory.
type majorRun struct {
	build *Build
	mem   MemReport
}

// startMajor lays b out with its variables in an auto-loaded var file and
// starts it, sampling its plugin processes.
func startMajor(tb testing.TB, p *packertest.Packer, b majorBuild, tag string) (*Build, *ProcMem, string) {
	tb.Helper()
	dir := tb.TempDir()
	buildtest.Layout(tb, dir, filepath.Join("..", "e2e", "testdata"), b.templates...)
	image := fmt.Sprintf("bench-conc-%s-%s-%d", b.name, tag, time.Now().UnixNano()%1e6)
	vars, err := json.Marshal(b.vars(image))
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bench.auto.pkrvars.json"), vars, 0o600); err != nil {
		tb.Fatal(err)
	}
	bd := StartBuild(tb, p, theLab, dir)
	return bd, WatchProcs(bd.cmd.Process.Pid, pluginPrefix, 100*time.Millisecond), image
}

// finishMajor waits for a started build, stops its sampler, checks it
// made its one image and deletes it.
func finishMajor(b *testing.B, name string, bd *Build, pm *ProcMem, image string) majorRun {
	b.Helper()
	bd.Wait(b, 60*time.Minute)
	r := majorRun{build: bd, mem: pm.Stop()}
	if bd.Exit != 0 {
		b.Fatalf("%s: packer build exited %d:\n%s", name, bd.Exit, logtail.Lines(bd.Output(), 60))
	}
	if n := len(buildtest.ListImages(b, theLab, image)); n != 1 {
		b.Fatalf("%s: want one image named %s, got %d", name, image, n)
	}
	if r.mem.Procs == 0 {
		b.Fatalf("%s: no %s* process seen in packer's process group", name, pluginPrefix)
	}
	deleteImage(b, image)
	return r
}

// runMajors runs every majorBuild at once (together) or one after the
// other, and returns their runs and the wall time of all of them.
func runMajors(b *testing.B, p *packertest.Packer, together bool, tag string) ([]majorRun, time.Duration) {
	b.Helper()
	start := time.Now()
	runs := make([]majorRun, len(majorBuilds))
	if together {
		type started struct {
			bd    *Build
			pm    *ProcMem
			image string
		}
		var ss []started
		for _, mb := range majorBuilds {
			bd, pm, image := startMajor(b, p, mb, tag)
			ss = append(ss, started{bd, pm, image})
		}
		for i, s := range ss {
			runs[i] = finishMajor(b, majorBuilds[i].name, s.bd, s.pm, s.image)
		}
	} else {
		for i, mb := range majorBuilds {
			bd, pm, image := startMajor(b, p, mb, tag)
			runs[i] = finishMajor(b, mb.name, bd, pm, image)
		}
	}
	return runs, time.Since(start)
}

// BenchmarkConcurrentBuilds runs our RL9 and RL8 fat builds at once with
// the real packer binary, as one runner building both images of a site
// does, and the same two builds one after the other, and prints each
// build's wall time, the pair's and the peak resident memory of each
// build's plugin processes. The order alternates by round; the first
// round runs the pair at once first, so the lab's first-use costs (the
// base images' unpacked trees) fall on that side, not flattering it.
func BenchmarkConcurrentBuilds(b *testing.B) {
	requireLab(b)
	p := packertest.Setup(b)
	var c concurrentFigures
	before := settledTotal(theLab)
	for b.Loop() {
		for round := range rounds() {
			order := []bool{true, false}
			if round%2 == 1 {
				order = []bool{false, true}
			}
			for _, together := range order {
				runs, wall := runMajors(b, p, together, map[bool]string{true: "pair", false: "seq"}[together])
				if left := settledTotal(theLab) - before; left != 0 {
					b.Fatalf("the builds (at once: %v) left %d resources on the cloud", together, left)
				}
				c.add(round, together, runs, wall)
			}
		}
	}
	c.print(b)
}

// concurrentFigures collects BenchmarkConcurrentBuilds' rounds.
type concurrentFigures struct {
	rows        [][]string
	seqs, pairs []time.Duration
	peak        map[string]int64 // by build: the largest plugin RSS peak over its runs
}

func (c *concurrentFigures) add(round int, together bool, runs []majorRun, wall time.Duration) {
	mode := "one after the other"
	if together {
		mode = "at once"
		c.pairs = append(c.pairs, wall)
	} else {
		c.seqs = append(c.seqs, wall)
	}
	if c.peak == nil {
		c.peak = map[string]int64{}
	}
	for i, r := range runs {
		name := majorBuilds[i].name
		c.peak[name] = max(c.peak[name], r.mem.PeakSum)
		c.rows = append(c.rows, []string{strconv.Itoa(round + 1), mode, name, secs(r.build.Wall()), secs(wall),
			strconv.Itoa(r.mem.Procs), mib(r.mem.PeakSum), mib(r.mem.SumHWM), fmt.Sprintf("%s (%s)", mib(r.mem.MaxHWM), r.mem.MaxArgs)})
	}
}

func (c *concurrentFigures) print(b *testing.B) {
	seq, pair := MedianDuration(c.seqs), MedianDuration(c.pairs)
	rl9, rl8 := c.peak["RL9"], c.peak["RL8"]
	profile := profileName()
	t := Table{
		Title:  fmt.Sprintf("Concurrent builds (profile %s): our RL9 and RL8 fat builds at once on one runner vs one after the other", profile),
		Header: []string{"round", "mode", "build", "wall s", "all builds s", "plugin procs", "plugin RSS peak MiB", "sum of VmHWM MiB", "largest process VmHWM MiB"},
		Rows:   c.rows,
		Notes: []string{
			fmt.Sprintf("median: both at once %s s, one after the other %s s; at once / one after the other = %.3f", secs(pair), secs(seq), ratio(pair, seq)),
			fmt.Sprintf("GOAL concurrent builds (%s): RL9 and RL8 fat builds at once took %s s against %s s one after the other (ratio %.3f); the plugin's peak memory per build: RL9 %s MiB, RL8 %s MiB (goal: reported: %s)",
				profile, secs(pair), secs(seq), ratio(pair, seq), mib(rl9), mib(rl8), met(pair > 0 && seq > 0 && rl9 > 0 && rl8 > 0)),
			"memory: every " + pluginPrefix + "* process in the build's packer process group (one per component packer starts), read from /proc every 100 ms while it lives; " +
				"plugin RSS peak is the largest sum of their VmRSS at one sample (what the build's plugin held at once; the goal's figure, the largest over the build's runs), " +
				"VmHWM each process's own peak as the kernel keeps it, which no gap between samples lowers",
			"the builds: the templates of testworld/e2e's TestFatBuild (RL9, a control node's groups) and TestFatBuildRocky8 (RL8, the groups whose values differ by major); " +
				"the first round runs the pair at once first, so the lab's first-use costs fall on that side",
		},
	}
	t.Print(os.Stdout)
	b.ReportMetric(pair.Seconds(), "at-once-s")
	b.ReportMetric(seq.Seconds(), "one-after-other-s")
	b.ReportMetric(ratio(pair, seq), "at-once/one-after-other")
	b.ReportMetric(float64(rl9)/(1<<20), "rl9-plugin-peak-MiB")
	b.ReportMetric(float64(rl8)/(1<<20), "rl8-plugin-peak-MiB")
}

func mib(n int64) string { return fmt.Sprintf("%.1f", float64(n)/(1<<20)) }
