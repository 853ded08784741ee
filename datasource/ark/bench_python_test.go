package ark

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/pulpfake"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
)

// latestTimestampsPy does what the appliance's latest_timestamps.py does,
// written for this benchmark: for each repository, one after another, GET
// the Pulp listing page <content_url>/<path>/ with requests, parse the
// links with BeautifulSoup and keep the newest timestamp-named entry.
const latestTimestampsPy = `import json, re, sys
import requests
from bs4 import BeautifulSoup

TS = re.compile(r"^\d{8}T\d{6}$")

def latest(session, content_url, path):
    r = session.get(content_url.rstrip("/") + "/" + path.strip("/") + "/", timeout=30)
    r.raise_for_status()
    names = []
    for a in BeautifulSoup(r.text, "html.parser").find_all("a", href=True):
        name = a["href"].strip("/").split("/")[-1]
        if TS.match(name):
            names.append(name)
    if not names:
        raise SystemExit("no snapshots under " + path)
    return max(names)

def main():
    spec = json.load(sys.stdin)
    session = requests.Session()
    session.trust_env = False
    if spec.get("username"):
        session.auth = (spec["username"], spec["password"])
    out = {name: latest(session, spec["content_url"], path) for name, path in spec["repos"].items()}
    json.dump(out, sys.stdout)

main()
`

// BenchmarkResolve60ReposVsPython adds the appliance's way to the
// BenchmarkResolve60Repos comparison: the same 60 entries on a content
// app answering after 50 ms, resolved by the data source one at a time,
// with the default concurrency, and by a Python requests+bs4 script doing
// what latest_timestamps.py does (sequential; Debian's python3-requests and
// python3-bs4). All three must agree on every answer.
func BenchmarkResolve60ReposVsPython(b *testing.B) {
	const repos, latency = 60, 50 * time.Millisecond
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import requests, bs4").Run(); err != nil {
		needs.Unavailable(b, fmt.Sprintf("%s lacks requests or bs4 (scripts/deps.sh installs python3-requests python3-bs4): %v", py, err))
	}
	s := pulpfake.New(pulpfake.Options{Latency: latency})
	var blocks []map[string]interface{}
	paths := map[string]string{}
	for i := range repos {
		path := fmt.Sprintf("bench/%02d/x86_64/os", i)
		// a different newest snapshot per repository, so a wrong pick shows
		s.AddSnapshots(path, "20250102T030405", fmt.Sprintf("20251106T2115%02d", i), "20250601T120000")
		name := fmt.Sprintf("repo%02d", i)
		blocks = append(blocks, map[string]interface{}{"name": name, "path": path})
		paths[name] = path
	}
	if err := s.Start(); err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	script := filepath.Join(b.TempDir(), "latest_timestamps.py")
	if err := os.WriteFile(script, []byte(latestTimestampsPy), 0o600); err != nil {
		b.Fatal(err)
	}
	spec, _ := json.Marshal(map[string]any{"content_url": s.ContentURL(), "repos": paths})

	resolveWith := func(concurrency int) (time.Duration, map[string]string) {
		d, err := configure(map[string]interface{}{"os_version": "9.6", "content_url": s.ContentURL(), "repo": blocks, "concurrency": concurrency})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		out, err := Resolve(context.Background(), &d.config, func(string) {})
		if err != nil || len(out.Repos) != repos {
			b.Fatalf("resolve: %v (%d repos)", err, len(out.Repos))
		}
		return time.Since(start), out.Timestamps
	}
	python := func() (time.Duration, map[string]string) {
		cmd := exec.Command(py, script)
		cmd.Stdin = bytes.NewReader(spec)
		start := time.Now()
		out, err := cmd.Output()
		d := time.Since(start)
		if err != nil {
			b.Fatalf("python: %v", err)
		}
		var m map[string]string
		if err := json.Unmarshal(out, &m); err != nil {
			b.Fatalf("python output %q: %v", out, err)
		}
		return d, m
	}

	var seq, conc, pyd time.Duration
	for b.Loop() {
		d1, a1 := resolveWith(1)
		d2, a2 := resolveWith(DefaultConcurrency)
		d3, a3 := python()
		seq, conc, pyd = seq+d1, conc+d2, pyd+d3
		for name := range paths {
			want := fmt.Sprintf("20251106T2115%s", name[len("repo"):])
			if a1[name] != want || a2[name] != want || a3[name] != want {
				b.Fatalf("%s: sequential %q, concurrent %q, python %q, want %q", name, a1[name], a2[name], a3[name], want)
			}
		}
	}
	n := float64(b.N)
	b.ReportMetric(seq.Seconds()/n, "sequential-s")
	b.ReportMetric(conc.Seconds()/n, "concurrent-s")
	b.ReportMetric(pyd.Seconds()/n, "python-s")
	b.ReportMetric(float64(pyd)/float64(conc), "python/concurrent-x")
	b.ReportMetric(float64(pyd)/float64(seq), "python/sequential-x")
	b.ReportMetric(float64(seq)/float64(conc), "sequential/concurrent-x")
	fmt.Printf("\n== Data source: 60 repos, 50 ms per request\n%-34s %8.2f s\n%-34s %8.2f s\n%-34s %8.2f s\n   python / concurrent = %.1fx, python / sequential = %.2fx, sequential / concurrent = %.1fx; all 60 answers identical\n\n",
		"fatimage-ark concurrency=1", seq.Seconds()/n, fmt.Sprintf("fatimage-ark concurrency=%d", DefaultConcurrency), conc.Seconds()/n,
		"python requests+bs4 (sequential)", pyd.Seconds()/n, float64(pyd)/float64(conc), float64(pyd)/float64(seq), float64(seq)/float64(conc))
}
