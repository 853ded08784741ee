package repos

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkloadSmall builds a small workload: every package is there,
// signed, and installing the tops' closure pulls in every package (the
// layers leave none unreachable); a second build reuses the cache.
func TestWorkloadSmall(t *testing.T) {
	requireTools(t)
	spec := WorkloadSpec{Packages: 60, TotalBytes: 1 << 20, Tops: 4, Depth: 4}
	cache := t.TempDir()
	w, err := BuildWorkload(cache, spec, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	rpms, _ := filepath.Glob(filepath.Join(w.Dir, "Packages", "*.rpm"))
	if len(rpms) != 60 || len(w.Tops) != 4 || w.Bytes < 1<<20 {
		t.Fatalf("%d rpms, tops %v, %d bytes", len(rpms), w.Tops, w.Bytes)
	}
	out, err := exec.Command("rpm", append([]string{"-qp", "--nosignature", "--qf", "%{NAME} %{RSAHEADER:pgpsig}\n"}, rpms...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.HasSuffix(l, "(none)") {
			t.Errorf("unsigned: %s", l)
		}
	}
	// reachability: walk Requires from the tops
	req := map[string][]string{}
	for _, f := range rpms {
		name, _ := exec.Command("rpm", "-qp", "--nosignature", "--qf", "%{NAME}", f).Output()
		rs, _ := exec.Command("rpm", "-qpR", "--nosignature", f).Output()
		for _, r := range strings.Fields(string(rs)) {
			if strings.HasPrefix(r, "wl-") {
				req[string(name)] = append(req[string(name)], r)
			}
		}
	}
	seen := map[string]bool{}
	var walk func(string)
	walk = func(n string) {
		if seen[n] {
			return
		}
		seen[n] = true
		for _, r := range req[n] {
			walk(r)
		}
	}
	for _, top := range w.Tops {
		walk(top)
	}
	if len(seen) != 60 {
		t.Errorf("the tops reach %d of 60 packages", len(seen))
	}
	again, err := BuildWorkload(cache, spec, t.Logf)
	if err != nil || again.BuildTook != 0 || again.Dir != w.Dir {
		t.Errorf("second build: %v, took %v, dir %s", err, again.BuildTook, again.Dir)
	}
}

func TestWorkloadLayers(t *testing.T) {
	sizes, err := RealWorkload.layers()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for i, n := range sizes {
		sum += n
		if i > 0 && n > 2*sizes[i-1] {
			t.Errorf("layer %d has %d packages, more than twice the %d above", i, n, sizes[i-1])
		}
	}
	if sum != RealWorkload.Packages || len(sizes) != RealWorkload.Depth {
		t.Errorf("layers %v", sizes)
	}
	if _, err := (WorkloadSpec{Packages: 1000, Tops: 2, Depth: 3}).layers(); err == nil {
		t.Error("1000 packages in 3 layers from 2 tops: no error")
	}
}
