package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/logtail"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
)

const builderTemplate = `packer {
  required_plugins {
    fatimage = {
      source  = "github.com/stackhpc/fatimage"
      version = ">= 0.1.0"
    }
  }
}

source "fatimage-openstack" "lab" {
  source_image_name   = "Rocky-9-GenericCloud-Base-9.6"
  flavor              = "m1.small"
  floating_ip_network = "public"
  ssh_username        = "rocky"
  ssh_timeout         = "2m"
  image_name          = "%s"
}

build {
  sources = ["source.fatimage-openstack.lab"]
  provisioner "shell" {
    inline = ["true"]
  }
}
`

// BenchmarkBuilder runs a real packer build with the plugin against the
// lab, no injected delay, and prints its wall time, the API calls by
// service and, for every state change the cloud made (server ACTIVE and
// SHUTOFF, image active), how long the builder took to read it.
func BenchmarkBuilder(b *testing.B) {
	requireLab(b)
	p := packertest.Setup(b)
	var rows [][]string
	var walls []time.Duration
	var lags []time.Duration
	calls := map[string]int{}
	for b.Loop() {
		for i := range rounds() {
			dir := b.TempDir()
			name := fmt.Sprintf("bench-build-%d-%d", i, time.Now().UnixNano()%1e6)
			if err := os.WriteFile(filepath.Join(dir, "build.pkr.hcl"), []byte(fmt.Sprintf(builderTemplate, name)), 0o600); err != nil {
				b.Fatal(err)
			}
			before := theLab.Cloud.Calls()
			theLab.Cloud.RecordStates(true)
			start := time.Now()
			r := p.Run(b, dir, theLab.Environ(), "build", ".")
			wall := time.Since(start)
			events := theLab.Cloud.StateEvents()
			theLab.Cloud.RecordStates(false)
			if r.ExitCode != 0 {
				b.Fatalf("packer build: exit %d\n%s", r.ExitCode, logtail.Lines(r.Output(), 40))
			}
			after := theLab.Cloud.Calls()
			walls = append(walls, wall)
			var parts []string
			var keys []string
			for k := range after {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			total := 0
			for _, k := range keys {
				n := after[k] - before[k]
				calls[k] += n
				total += n
				parts = append(parts, fmt.Sprintf("%s %d", k, n))
			}
			var lagParts []string
			for _, e := range events {
				if e.Observed.IsZero() {
					lagParts = append(lagParts, fmt.Sprintf("%s %s: not read", e.Kind, e.Status))
					continue
				}
				lag := e.Observed.Sub(e.Changed)
				lags = append(lags, lag)
				lagParts = append(lagParts, fmt.Sprintf("%s %s %.0f ms", e.Kind, e.Status, float64(lag.Microseconds())/1000))
			}
			rows = append(rows, []string{fmt.Sprint(i + 1), secs(wall), fmt.Sprint(total), strings.Join(parts, ", "), strings.Join(lagParts, "; ")})
			deleteImage(b, name)
		}
	}
	maxLag := time.Duration(0)
	for _, l := range lags {
		maxLag = max(maxLag, l)
	}
	n := 0
	for _, v := range calls {
		n += v
	}
	var wallSum time.Duration
	for _, w := range walls {
		wallSum += w
	}
	perMin := float64(n) / wallSum.Minutes()
	t := Table{
		Title:  fmt.Sprintf("Builder: packer build against the lab (profile %s: the cloud's transitions take %s)", profileName(), transitionsNote()),
		Header: []string{"round", "wall s", "API calls", "by service", "state change -> builder read it"},
		Rows:   rows,
		Notes: []string{fmt.Sprintf("median wall %s s; state-change lag median %.0f ms, max %.0f ms (target < 1000 ms)",
			secs(MedianDuration(walls)), float64(MedianDuration(lags).Microseconds())/1000, float64(maxLag.Microseconds())/1000),
			fmt.Sprintf("GOAL state-change lag max (%s) = %.0f ms (goal < 1000 ms: %s) at %.1f API requests per minute (%d calls in %s s)",
				profileName(), float64(maxLag.Microseconds())/1000, met(maxLag < time.Second), perMin, n, secs(wallSum))},
	}
	t.Print(os.Stdout)
	b.ReportMetric(MedianDuration(walls).Seconds(), "build-s")
	b.ReportMetric(float64(MedianDuration(lags).Microseconds())/1000, "lag-median-ms")
	b.ReportMetric(float64(maxLag.Microseconds())/1000, "lag-max-ms")
	b.ReportMetric(float64(n)/float64(len(walls)), "api-calls/build")
	b.ReportMetric(perMin, "api-calls/min")
}

// deleteImage removes the build's image so the lab ends clean.
func deleteImage(b *testing.B, name string) {
	b.Helper()
	ctx := context.Background()
	provider, err := labtest.Provider(ctx, theLab)
	if err != nil {
		b.Fatal(err)
	}
	c, err := openstack.NewImageV2(provider, gophercloud.EndpointOpts{Region: "RegionOne"})
	if err != nil {
		b.Fatal(err)
	}
	pages, err := images.List(c, images.ListOpts{Name: name}).AllPages(ctx)
	if err != nil {
		b.Fatal(err)
	}
	list, _ := images.ExtractImages(pages)
	for _, img := range list {
		if err := images.Delete(ctx, c, img.ID).ExtractErr(); err != nil {
			b.Fatal(err)
		}
	}
}

// profileName is the lab's timing profile (LAB_PROFILE, default fast).
func profileName() string {
	if p := os.Getenv("LAB_PROFILE"); p != "" {
		return p
	}
	return "fast"
}

// transitionsNote says how long the profile's transitions take.
func transitionsNote() string {
	if profileName() == "realistic" {
		return "real clouds' times: server build ~20 s, guest boot ~45 s, stop ~15 s, snapshot ~10 s + data at 100 MiB/s, ±30%"
	}
	return "a fraction of a second each"
}
