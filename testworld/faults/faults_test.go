// Package faults runs real `packer build`s against the lab while injecting
// faults: interrupts at every builder step, flaky and failing APIs, a VM
// reset mid-update, a forbidden Pulp snapshot, wrong credentials and
// concurrent builds. Every case checks that nothing is left behind, and
// the builds' logs, output and images are audited for secrets. See
// docs/reliability.md for what each test injects and what it measured.
//
// The cloud's faults and its leak check (labtest.RequireClean) are
// lab-wide, so the top-level tests run one after another; only the builds
// of TestConcurrentBuilds run at the same time.
package faults

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/buildtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/figures"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
)

var theLab *lab.Lab

func TestMain(m *testing.M) {
	code := figures.Written(labtest.Main(m, &theLab))
	packertest.Cleanup()
	os.Exit(code)
}

var seq atomic.Int64

// uniqueName is a fresh image (and instance) name for one build.
func uniqueName(prefix string) string {
	return fmt.Sprintf("faults-%s-%d-%d", prefix, time.Now().Unix(), seq.Add(1))
}

// build is one packer build of a testdata directory, with PACKER_LOG
// going to its own file and the VMs' command lines sampled while it runs.
type build struct {
	Dir, Log string
	Proc     *packertest.Proc
	Argv     *buildtest.ArgvSampler
}

// startBuild copies testdata/<tmpl> to a fresh directory and starts
// `packer build` there with the lab's environment, PACKER_LOG=1 and extra
// environment entries (later entries win).
func startBuild(t *testing.T, tmpl string, env []string, args ...string) *build {
	t.Helper()
	labtest.Require(t)
	p := packertest.Setup(t)
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", tmpl))); err != nil {
		t.Fatal(err)
	}
	switch tmpl { // the builds shared with the e2e tests
	case "fat":
		buildtest.Layout(t, dir, "", buildtest.FatCommonName)
	case "sitepulp":
		buildtest.Layout(t, dir, "", buildtest.SitePulpName)
	default:
		buildtest.Layout(t, dir, "")
	}
	b := &build{Dir: dir, Log: filepath.Join(t.TempDir(), "packer.log"), Argv: buildtest.SampleArgv(t, theLab)}
	env = append(append(theLab.Environ(), "PACKER_LOG=1", "PACKER_LOG_PATH="+b.Log), env...)
	b.Proc = p.Start(t, dir, env, append(append([]string{"build"}, args...), ".")...)
	return b
}

// runBuild runs a build to its end.
func runBuild(t *testing.T, tmpl string, env []string, args ...string) (*build, packertest.Result) {
	t.Helper()
	b := startBuild(t, tmpl, env, args...)
	return b, b.Proc.Wait(t, 8*time.Minute)
}

// interrupt sends SIGINT as Ctrl-C does and waits for packer to exit,
// returning how long that took.
func (b *build) interrupt(t *testing.T) (packertest.Result, time.Duration) {
	t.Helper()
	sent := time.Now()
	if err := b.Proc.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := b.Proc.Wait(t, 3*time.Minute)
	return r, time.Since(sent)
}

// logText is the build's PACKER_LOG file.
func (b *build) logText(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(b.Log)
	if err != nil {
		t.Fatalf("PACKER_LOG_PATH: %v", err)
	}
	return string(data)
}

// findImage returns the one active image of that name and deletes it when
// the test ends.
func findImage(t *testing.T, name string) images.Image { return buildtest.FindImage(t, theLab, name) }

// requireFailedClean checks a build failed, saying want (case-insensitive),
// reported no resource it could not delete, and left nothing behind.
func requireFailedClean(t *testing.T, r packertest.Result, name string, want ...string) {
	t.Helper()
	out := r.Output()
	defer func() {
		if t.Failed() {
			t.Logf("packer's output:\n%s", out)
		}
	}()
	if r.ExitCode == 0 {
		t.Fatalf("the build succeeded:\n%s", out)
	}
	for _, w := range want {
		if !strings.Contains(strings.ToLower(out), strings.ToLower(w)) {
			t.Errorf("want %q in the output:\n%s", w, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "errored after") {
			t.Logf("packer: %s", strings.TrimSpace(line))
		}
	}
	if strings.Contains(out, "were not deleted") {
		t.Errorf("the builder reports leftovers:\n%s", out)
	}
	labtest.RequireClean(t, theLab)
	buildtest.RequireNoImage(t, theLab, name)
}

// Fewer files than a build's image layer holds (a builder-only build's
// has ~65, a fat build's ~117): a secret scan reading fewer walked the
// wrong tree.
const (
	minBuilderImageFiles = 20
	minFatImageFiles     = 100
)

// requireNoSecrets checks data (named what) carries no lab secret.
func requireNoSecrets(t *testing.T, what string, data []byte) {
	t.Helper()
	buildtest.RequireNoSecrets(t, theLab, what, data)
}

// auditBuild checks the build's UI output, PACKER_LOG and the command
// lines seen on the VMs while it ran for secrets.
func auditBuild(t *testing.T, b *build, r packertest.Result) {
	t.Helper()
	buildtest.RequireNoSecretsInArgv(t, b.Argv)
	requireNoSecrets(t, "packer's output", []byte(r.Output()))
	requireNoSecrets(t, "PACKER_LOG", []byte(b.logText(t)))
}

// waitHits waits until the cloud's fault rule i has applied at least n
// times: a latency fault's request is then in flight.
func waitHits(t *testing.T, i, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if hits := theLab.Cloud.FaultHits(); len(hits) > i && hits[i] >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("fault %d applied %v times in %s, want %d", i, theLab.Cloud.FaultHits(), timeout, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitIdle waits until the cloud serves no request.
func waitIdle(t *testing.T, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for theLab.Cloud.InFlight() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the cloud still serves %d requests after %s", theLab.Cloud.InFlight(), timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
