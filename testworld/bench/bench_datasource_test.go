package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/datasource/ark"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/pulpfake"
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

// latestTimestampsThreadsPy is the same resolver written for concurrency
// with the standard library only: urllib, html.parser and a thread pool of
// as many workers as the data source's concurrency (argv[1]), one listing
// GET per repository as in latest_timestamps.py.
const latestTimestampsThreadsPy = `import base64, json, re, sys, urllib.request
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser

TS = re.compile(r"^\d{8}T\d{6}$")

class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.names = []
    def handle_starttag(self, tag, attrs):
        if tag == "a":
            for k, v in attrs:
                if k == "href" and v:
                    name = v.strip("/").split("/")[-1]
                    if TS.match(name):
                        self.names.append(name)

def main():
    spec = json.load(sys.stdin)
    headers = {}
    if spec.get("username"):
        token = base64.b64encode((spec["username"] + ":" + spec["password"]).encode()).decode()
        headers["Authorization"] = "Basic " + token
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    def latest(item):
        name, path = item
        req = urllib.request.Request(spec["content_url"].rstrip("/") + "/" + path.strip("/") + "/", headers=headers)
        with opener.open(req, timeout=30) as r:
            p = Links()
            p.feed(r.read().decode())
        if not p.names:
            raise SystemExit("no snapshots under " + path)
        return name, max(p.names)
    with ThreadPoolExecutor(max_workers=int(sys.argv[1])) as ex:
        out = dict(ex.map(latest, spec["repos"].items()))
    json.dump(out, sys.stdout)

main()
`

// BenchmarkResolve60ReposVsPython adds the appliance's way to
// datasource/ark's BenchmarkResolve60Repos comparison: the same 60 entries on a content
// app answering after 50 ms, resolved by the data source one at a time,
// with the default concurrency, and by a Python requests+bs4 script doing
// what latest_timestamps.py does (sequential; Debian's python3-requests and
// python3-bs4), and by a concurrent Python resolver (stdlib threads, the
// data source's default concurrency). All four must agree on every answer;
// the content app's request log gives each one's requests per repository.
// It needs no lab, and drives the data source as Packer does (Configure,
// Execute).
func BenchmarkResolve60ReposVsPython(b *testing.B) {
	const repos, latency = 60, 50 * time.Millisecond
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import requests, bs4").Run(); err != nil {
		needs.Unavailable(b, fmt.Sprintf("%s lacks requests or bs4 (scripts/deps.sh installs python3-requests python3-bs4): %v", py, err))
	}
	s := pulpfake.New(pulpfake.Options{Latency: latency})
	var blocks []map[string]any
	paths := map[string]string{}
	for i := range repos {
		path := fmt.Sprintf("bench/%02d/x86_64/os", i)
		// a different newest snapshot per repository, so a wrong pick shows
		s.AddSnapshots(path, "20250102T030405", fmt.Sprintf("20251106T2115%02d", i), "20250601T120000")
		name := fmt.Sprintf("repo%02d", i)
		blocks = append(blocks, map[string]any{"name": name, "path": path})
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
	threads := filepath.Join(b.TempDir(), "latest_timestamps_threads.py")
	if err := os.WriteFile(threads, []byte(latestTimestampsThreadsPy), 0o600); err != nil {
		b.Fatal(err)
	}
	spec, _ := json.Marshal(map[string]any{"content_url": s.ContentURL(), "repos": paths})

	resolveWith := func(concurrency int) (time.Duration, map[string]string) {
		var d ark.Datasource
		if err := d.Configure(map[string]any{"os_version": "9.6", "content_url": s.ContentURL(), "repo": blocks, "concurrency": concurrency}); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		out, err := d.Execute()
		took := time.Since(start)
		if err != nil {
			b.Fatalf("resolve: %v", err)
		}
		ts := map[string]string{}
		for name, v := range out.GetAttr("timestamps").AsValueMap() {
			ts[name] = v.AsString()
		}
		if len(ts) != repos {
			b.Fatalf("resolve: %d repos", len(ts))
		}
		return took, ts
	}
	python := func(args ...string) (time.Duration, map[string]string) {
		cmd := exec.Command(py, args...)
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

	// requests answers how many requests per repository f made
	requests := func(f func() (time.Duration, map[string]string)) (time.Duration, map[string]string, float64) {
		s.ResetRequests()
		d, a := f()
		return d, a, float64(len(s.Requests())) / repos
	}
	var seq, conc, pyd, pyt time.Duration
	var rq [4]float64
	for b.Loop() {
		d1, a1, r1 := requests(func() (time.Duration, map[string]string) { return resolveWith(1) })
		d2, a2, r2 := requests(func() (time.Duration, map[string]string) { return resolveWith(ark.DefaultConcurrency) })
		d3, a3, r3 := requests(func() (time.Duration, map[string]string) { return python(script) })
		d4, a4, r4 := requests(func() (time.Duration, map[string]string) { return python(threads, fmt.Sprint(ark.DefaultConcurrency)) })
		seq, conc, pyd, pyt = seq+d1, conc+d2, pyd+d3, pyt+d4
		rq = [4]float64{r1, r2, r3, r4}
		for name := range paths {
			want := fmt.Sprintf("20251106T2115%s", name[len("repo"):])
			if a1[name] != want || a2[name] != want || a3[name] != want || a4[name] != want {
				b.Fatalf("%s: sequential %q, concurrent %q, python %q, python threads %q, want %q", name, a1[name], a2[name], a3[name], a4[name], want)
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
	b.ReportMetric(pyt.Seconds()/n, "python-threads-s")
	b.ReportMetric(float64(conc)/float64(pyt), "concurrent/python-threads")
	fmt.Printf("\n== Data source: %d repos, %s per request (fatimage-ark's Resolve vs Python; ratio = this row / fatimage-ark concurrency=%d)\n", repos, latency, ark.DefaultConcurrency)
	fmt.Printf("%-44s  %8s  %6s  %s\n", "contender", "wall s", "ratio", "requests/repo")
	for _, r := range []struct {
		name string
		d    time.Duration
		rq   float64
	}{
		{"fatimage-ark concurrency=1", seq, rq[0]},
		{fmt.Sprintf("fatimage-ark concurrency=%d", ark.DefaultConcurrency), conc, rq[1]},
		{"python requests+bs4 (sequential)", pyd, rq[2]},
		{fmt.Sprintf("python stdlib threads (%d workers)", ark.DefaultConcurrency), pyt, rq[3]},
	} {
		fmt.Printf("%-44s  %8.2f  %6.2f  %.1f\n", r.name, r.d.Seconds()/n, float64(r.d)/float64(conc), r.rq)
	}
	fmt.Printf("   RATIO data-source fatimage-ark/python-threads = %.3f; all %d answers identical across the four\n", float64(conc)/float64(pyt), repos)
	fmt.Printf("   fatimage-ark makes 2 requests per repository (the listing, then the chosen snapshot's repodata/repomd.xml to prove it readable with the credentials); the Python resolvers only the listing\n\n")
}
