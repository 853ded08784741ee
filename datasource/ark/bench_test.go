package ark

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/pulpfake"
)

// BenchmarkResolve60Repos resolves 60 repository entries against a content
// app answering every request after 50 ms, one at a time and with the
// default concurrency, in the same run, and reports both and their ratio.
func BenchmarkResolve60Repos(b *testing.B) {
	const repos, latency = 60, 50 * time.Millisecond
	s := pulpfake.New(pulpfake.Options{Latency: latency})
	var blocks []map[string]interface{}
	for i := range repos {
		path := fmt.Sprintf("bench/%02d/x86_64/os", i)
		s.AddSnapshots(path, "20250102T030405", "20250601T120000", "20251106T211545")
		blocks = append(blocks, map[string]interface{}{"name": fmt.Sprintf("repo%02d", i), "path": path})
	}
	if err := s.Start(); err != nil {
		b.Fatal(err)
	}
	defer s.Close()

	resolveWith := func(concurrency int) time.Duration {
		d, err := configure(map[string]interface{}{"os_version": "9.6", "content_url": s.ContentURL(), "repo": blocks, "concurrency": concurrency})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		out, err := Resolve(context.Background(), &d.config, func(string) {})
		if err != nil || len(out.Repos) != repos || out.Timestamps["repo59"] != "20251106T211545" {
			b.Fatalf("resolve: %v (%d repos)", err, len(out.Repos))
		}
		return time.Since(start)
	}

	var seq, conc time.Duration
	for b.Loop() {
		seq += resolveWith(1)
		conc += resolveWith(DefaultConcurrency)
	}
	n := float64(b.N)
	b.ReportMetric(seq.Seconds()/n, "sequential-s")
	b.ReportMetric(conc.Seconds()/n, "concurrent-s")
	b.ReportMetric(float64(seq)/float64(conc), "speedup-x")
}
