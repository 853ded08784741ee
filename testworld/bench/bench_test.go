package bench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
)

var theLab *lab.Lab

// TestMain starts a lab only when benchmarks run: the unit tests of this
// package need none. Without root the benchmarks skip (fail under
// FATIMAGE_E2E=1) with the reason, as in every lab package.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		os.Exit(m.Run())
	}
	// the SDK communicator logs every session through the log package
	if os.Getenv("BENCH_VERBOSE") == "" {
		log.SetOutput(io.Discard)
	}
	code := labtest.Main(m, &theLab)
	packertest.Cleanup()
	os.Exit(code)
}

func requireLab(b *testing.B) {
	b.Helper()
	labtest.Require(b)
}

func rounds() int {
	if n, err := strconv.Atoi(os.Getenv("BENCH_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 3
}

// BenchmarkProvisioning runs the fatimage provisioner, the ansible-core
// playbook doing the same work, and the provisioner's bare commands (the
// floor) on three fresh identical VMs per round, rotating who goes first,
// and prints each round and the medians side by side.
func BenchmarkProvisioning(b *testing.B) {
	requireLab(b)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Minute)
	defer cancel()
	w, err := NewWorkload(theLab, "control")
	if err != nil {
		b.Fatal(err)
	}
	key := NewKey(b)
	boot := func(name string) *VM {
		v := Boot(ctx, b, theLab, fmt.Sprintf("bench-%s-%d", name, time.Now().UnixNano()%1e6))
		v.InstallCounters(b, key)
		return v
	}
	// Warm-up, and the recording the floor replays.
	var rec Recording
	v0 := boot("capture")
	warm := measure(b, v0, func() Result { return RunProvisioner(ctx, b, v0, w, &rec, nil) })
	want := v0.Packages(b)
	v0.Close()
	floor := rec.FloorScripts()
	b.Logf("warm-up provisioner run %s; floor: %d script(s), %d bytes", warm.Wall.Round(time.Millisecond), len(floor), len(strings.Join(floor, "")))

	type contender struct {
		name string
		run  func(v *VM) Result
	}
	cs := []contender{
		{"fatimage", func(v *VM) Result { return RunProvisioner(ctx, b, v, w, nil, nil) }},
		{"ansible", func(v *VM) Result { return RunAnsible(ctx, b, v, w) }},
		{"ansible-expert", func(v *VM) Result { return RunPlaybook(ctx, b, v, w, ExpertPlaybook) }},
		{"floor", func(v *VM) Result { return RunFloor(ctx, b, v, floor) }},
	}
	results := map[string][]Result{}
	var rows [][]string
	for b.Loop() {
		for round := range rounds() {
			for i := range cs {
				c := cs[(i+round)%len(cs)]
				v := boot(c.name)
				r := measure(b, v, func() Result { return c.run(v) })
				if got := v.Packages(b); strings.Join(got, "\n") != strings.Join(want, "\n") {
					b.Errorf("%s round %d: installed packages differ from the provisioner's: %s", c.name, round+1, diff(want, got))
				}
				v.Close()
				results[c.name] = append(results[c.name], r)
				rows = append(rows, []string{strconv.Itoa(round + 1), c.name, secs(r.Wall), strconv.Itoa(r.DNF), strconv.Itoa(r.Sessions), strconv.Itoa(r.Connections), strconv.Itoa(r.Reboots)})
			}
		}
	}
	f, a, fl := median(results["fatimage"]), median(results["ansible"]), median(results["floor"])
	ex := median(results["ansible-expert"])
	var t Table
	t.Title = "Provisioning (groups = [\"control\"]): fatimage provisioner vs ansible-core playbook vs bare commands"
	t.Header = []string{"round", "contender", "wall s", "dnf runs", "ssh sessions", "tcp conns", "reboots"}
	t.Rows = rows
	t.Notes = []string{
		fmt.Sprintf("median wall: fatimage %s s, ansible %s s, ansible-expert %s s, floor %s s", secs(f.Wall), secs(a.Wall), secs(ex.Wall), secs(fl.Wall)),
		fmt.Sprintf("GOAL provisioning only (one VM, %s): fatimage / ansible-expert = %.3f (goal <= 0.5: %s)", profileName(), ratio(f.Wall, ex.Wall), met(ratio(f.Wall, ex.Wall) <= 0.5)),
		floorGoal(ratio(f.Wall, fl.Wall)),
		fmt.Sprintf("fatimage / ansible (appliance-style) = %.3f", ratio(f.Wall, a.Wall)),
		fmt.Sprintf("the provisioner's own count of dnf commands: %d (VM-side count %d)", f.SelfDNF, f.DNF),
	}
	t.Print(os.Stdout)
	b.ReportMetric(f.Wall.Seconds(), "fatimage-s")
	b.ReportMetric(a.Wall.Seconds(), "ansible-s")
	b.ReportMetric(fl.Wall.Seconds(), "floor-s")
	b.ReportMetric(ratio(f.Wall, a.Wall), "fatimage/ansible")
	b.ReportMetric(ex.Wall.Seconds(), "ansible-expert-s")
	b.ReportMetric(ratio(f.Wall, ex.Wall), "fatimage/ansible-expert")
	b.ReportMetric(ratio(f.Wall, fl.Wall), "fatimage/floor")
	b.ReportMetric(float64(f.DNF), "fatimage-dnf")
	b.ReportMetric(float64(a.DNF), "ansible-dnf")
	b.ReportMetric(float64(f.Sessions), "fatimage-sessions")
	b.ReportMetric(float64(a.Sessions), "ansible-sessions")
	b.ReportMetric(float64(fl.Sessions), "floor-sessions")
}

// floorGoal states the floor goal for ratio = fatimage / floor. The floor
// replays the provisioner's own commands, so a ratio well below 1 cannot
// be the provisioner's merit: it is the noise of a loaded machine (one
// contender slowed by other work) and the goal is not judged from it.
func floorGoal(r float64) string {
	if r < 0.9 {
		return fmt.Sprintf("GOAL fatimage / bare commands (floor) = %.3f (goal <= 1.05: not judged: below 0.9 is implausible, as the floor replays the provisioner's own commands; the machine's load distorted the round: rerun with more BENCH_ROUNDS on a quiet machine)", r)
	}
	return fmt.Sprintf("GOAL fatimage / bare commands (floor) = %.3f (goal <= 1.05: %s)", r, met(r <= 1.05))
}

// measure runs f with v's counters reset, and sets Reboots from the boot id.
func measure(b *testing.B, v *VM, f func() Result) Result {
	b.Helper()
	before := v.Run(b, bootIDCmd)
	v.ResetCounts(b)
	r := f()
	if v.Run(b, bootIDCmd) != before && r.Reboots == 0 {
		r.Reboots = 1
	}
	return r
}
