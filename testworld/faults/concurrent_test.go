package faults

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
)

// TestConcurrentBuilds runs four fat builds at once on the lab: all
// succeed, each with its own server, keypair, floating IP and image, and
// together they leave nothing behind.
func TestConcurrentBuilds(t *testing.T) {
	labtest.Require(t)
	const n = 4
	names := make([]string, n)
	outputs := make([]string, n)
	mans := make([]string, n)
	dir := t.TempDir()
	started := time.Now()
	t.Run("builds", func(t *testing.T) {
		for i := range n {
			names[i] = uniqueName(fmt.Sprintf("conc%d", i))
			mans[i] = filepath.Join(dir, fmt.Sprintf("manifest-%d.json", i))
			t.Run(names[i], func(t *testing.T) {
				t.Parallel()
				b, r := runBuild(t, "fat", nil, "-var", "image_name="+names[i], "-var", "manifest_output="+mans[i])
				if r.ExitCode != 0 {
					t.Fatalf("packer build failed:\n%s", r.Output())
				}
				auditBuild(t, b, r)
				outputs[i] = r.Output()
			})
		}
	})
	took := time.Since(started)
	if t.Failed() {
		t.FailNow()
	}
	seen := map[string]string{}
	var mu sync.Mutex
	unique := func(kind, v, owner string) {
		mu.Lock()
		defer mu.Unlock()
		if other, ok := seen[kind+" "+v]; ok {
			t.Errorf("%s %s used by %s and %s", kind, v, other, owner)
		}
		seen[kind+" "+v] = owner
	}
	patterns := map[string]*regexp.Regexp{
		"server":      regexp.MustCompile(`Waiting for server (\S+) to become ACTIVE`),
		"keypair":     regexp.MustCompile(`Creating the temporary keypair (\S+?)\.\.\.`),
		"floating IP": regexp.MustCompile(`Floating IP (\S+) is attached`),
		"image":       regexp.MustCompile(`An image was created: (\S+)`),
	}
	for i, out := range outputs {
		for kind, re := range patterns {
			m := re.FindStringSubmatch(out)
			if m == nil {
				t.Errorf("%s: no %s in the output", names[i], kind)
				continue
			}
			unique(kind, m[1], names[i])
		}
		img := findImage(t, names[i])
		if !strings.Contains(out, img.ID) {
			t.Errorf("%s: the artifact is not image %s", names[i], img.ID)
		}
		unique("image name", img.Name, names[i])
		m, data := readManifest(t, mans[i])
		if len(m.Image.Snapshots) == 0 {
			t.Errorf("%s: manifest %s", names[i], data)
		}
	}
	labtest.RequireClean(t, theLab)
	t.Logf("%d fat builds at once finished in %s", n, took.Round(time.Second))
	figure(t, "concurrent", []string{"fat builds at once", "all finished after"}, fmt.Sprint(n), dur(took))
}
