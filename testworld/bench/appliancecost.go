package bench

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/provisioner/fatimage"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
)

// The cost of reading the site's appliance (issue #25): with
// appliance_dir and appliance_environment, a build's first step resolves
// the appliance variables once with the site's Ansible against the build
// VM. The whole-build table's fatimage template has no appliance (its
// image is compared with today's stack's, which gets the built-in
// values), so each round resolves once more, on a fresh lab VM as the
// build's, and the figure is set beside that round's fatimage build.

// applianceSite is the site a build would read: the real appliance
// checkout with appliancesite's environment on top of .stackhpc.
func applianceSite(tb testing.TB) *appliance.Site {
	tb.Helper()
	return appliancesite.New(tb, appliancesite.Overrides, "fatimage")
}

// resolveAppliance resolves on a fresh lab VM what the step `appliance`
// resolves (fatimage.ApplianceRequest), through internal/appliance as
// the step does; the VM's boot is not counted.
func resolveAppliance(tb testing.TB, l *lab.Lab, site *appliance.Site) *appliance.Result {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	req, _, err := fatimage.ApplianceRequest(site)
	if err != nil {
		tb.Fatal(err)
	}
	v := Boot(ctx, tb, l, fmt.Sprintf("bench-appliance-%d", time.Now().UnixNano()%1e6))
	defer v.Close()
	t := appliance.Target{Host: v.IP, Port: 22, User: lab.SSHUser, PrivateKey: v.PrivateKey}
	var log bytes.Buffer
	res, err := site.Resolve(ctx, t, req, &log)
	if err != nil {
		tb.Fatalf("resolving the appliance variables: %v\n%s", err, log.String())
	}
	return res
}

// applianceCost is the resolutions' table: per round the resolution
// beside that round's fatimage whole build (builds, in round order), and
// the medians, each figure its own. share is the resolution's part of a
// build that does it: resolution / (whole build + resolution).
func applianceCost(profile string, res []*appliance.Result, builds []time.Duration) (t Table, resolve time.Duration, share float64) {
	var took []time.Duration
	for i, r := range res {
		took = append(took, r.Duration)
		row := []string{strconv.Itoa(i + 1), secs(r.Duration), "-", "-"}
		if i < len(builds) {
			row[2], row[3] = secs(builds[i]), pct(ratio(r.Duration, builds[i]+r.Duration))
		}
		t.Rows = append(t.Rows, row)
	}
	resolve, build := MedianDuration(took), MedianDuration(builds)
	share = ratio(resolve, build+resolve)
	if len(res) > 1 {
		t.Rows = append(t.Rows, []string{"median of " + strconv.Itoa(len(res)), secs(resolve), secs(build), pct(share)})
	}
	t.Title = fmt.Sprintf("Appliance variable resolution (profile %s): the step `appliance` (appliance_dir + appliance_environment) beside the fatimage whole build", profile)
	t.Header = []string{"round", "resolution s", "fatimage whole build s", "share of a build with it"}
	t.Notes = []string{
		fmt.Sprintf("median: resolution %s s, fatimage whole build %s s: the resolution is %s of a build that reads the site's appliance (resolution / (build + resolution))", secs(resolve), secs(build), pct(share)),
		"the whole build above uses the built-in values (its image is compared with today's stack's); each round resolves once more, as the build's first step does, on a fresh lab VM (its boot not counted)",
	}
	if len(res) > 0 {
		m := slices.IndexFunc(res, func(r *appliance.Result) bool { return r.Duration == resolve })
		t.Notes = append(t.Notes, "what the build says (median round): "+res[m].Summary())
	}
	return t, resolve, share
}

// pct is r as a percentage.
func pct(r float64) string { return strconv.FormatFloat(100*r, 'f', 1, 64) + "%" }

// secs prints a duration as the bench's tables do.
func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) }

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
