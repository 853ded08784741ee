package faults

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/buildtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/cloud"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/repos"
)

// manifest is what the tests read of the provisioner's manifest_output.
type manifest struct {
	Image struct {
		Snapshots map[string]string `json:"snapshots"`
	} `json:"image"`
	Reboots int `json:"reboots"`
}

func readManifest(t *testing.T, file string) (manifest, []byte) {
	t.Helper()
	var m manifest
	data, err := os.ReadFile(file)
	if err == nil {
		err = json.Unmarshal(data, &m)
	}
	if err != nil {
		t.Fatalf("manifest_output: %v", err)
	}
	return m, data
}

// flakyFaults answer about 20% of all OpenStack API calls (every service)
// with 503 or 429, each with Retry-After: 1. The rules are tried in order
// and the first that fires answers (the lab counts a hit for it alone): a
// call is faulted with probability 0.1 + 0.9*0.111 = 0.2. The first two
// rules make sure the run is never lucky: the first two calls answer 503
// and 429.
var flakyFaults = []cloud.Fault{
	{Status: 503, RetryAfter: "1", Times: 1},
	{Status: 429, RetryAfter: "1", Times: 1},
	{Status: 503, RetryAfter: "1", Rate: 0.1},
	{Status: 429, RetryAfter: "1", Rate: 0.111},
}

var retryLine = regexp.MustCompile(`\[DEBUG\] openstack: retrying .*: (\d{3}) `)

// retriesLogged counts the builder's retries in PACKER_LOG by status.
func retriesLogged(log string) map[string]int {
	n := map[string]int{}
	for _, m := range retryLine.FindAllStringSubmatch(log, -1) {
		n[m[1]]++
	}
	return n
}

// requireRetriedEach checks the build's PACKER_LOG shows exactly one
// retry for each answer flakyFaults injected (hits, by rule; the builder is
// the only client of the cloud during a build), and returns the retries.
func requireRetriedEach(t *testing.T, hits []int, log string) map[string]int {
	t.Helper()
	if len(hits) != len(flakyFaults) || hits[0] != 1 || hits[1] != 1 {
		t.Fatalf("want the first two calls answered 503 and 429, hits %v", hits)
	}
	retries := retriesLogged(log)
	if injected := hits[0] + hits[2]; retries["503"] != injected {
		t.Errorf("the builder logged %d retries after 503, the cloud injected %d", retries["503"], injected)
	}
	if injected := hits[1] + hits[3]; retries["429"] != injected {
		t.Errorf("the builder logged %d retries after 429, the cloud injected %d", retries["429"], injected)
	}
	return retries
}

// TestFlakyAPI runs a full fat build (data source, builder, fatimage
// provisioner) while the cloud throttles and fails a fifth of its calls:
// the build succeeds, leaves nothing behind, and neither its output, its
// PACKER_LOG, its manifest nor the image's files carry a secret.
func TestFlakyAPI(t *testing.T) {
	labtest.Require(t)
	defer theLab.Cloud.SetFaults()
	name := uniqueName("flaky")
	man := filepath.Join(t.TempDir(), "manifest.json")
	callsBefore := theLab.Cloud.Calls()
	theLab.Cloud.SetFaults(flakyFaults...)
	started := time.Now()
	b, r := runBuild(t, "fat", nil, "-var", "image_name="+name, "-var", "manifest_output="+man)
	took := time.Since(started)
	hits := theLab.Cloud.FaultHits()
	callsAfter := theLab.Cloud.Calls()
	theLab.Cloud.SetFaults()
	if r.ExitCode != 0 {
		t.Fatalf("packer build failed under 20%% 503/429 (hits %v):\n%s", hits, r.Output())
	}
	calls := 0
	for svc, n := range callsAfter {
		calls += n - callsBefore[svc]
	}
	retries := requireRetriedEach(t, hits, b.logText(t))
	// The random rules must have answered too, or the run measured only
	// the two forced answers (at ~40 calls, none hits with p < 1e-3).
	if hits[2]+hits[3] == 0 {
		t.Errorf("the random 20%% of 503/429 never hit in %d calls (hits %v)", calls, hits)
	}
	t.Logf("%d API calls; fault hits 503: %d, 429: %d; the builder retried %d after 503 and %d after 429 (%.1f%% of calls); build took %s",
		calls, hits[0]+hits[2], hits[1]+hits[3], retries["503"], retries["429"], 100*float64(retries["503"]+retries["429"])/float64(calls), took.Round(time.Second))
	figure(t, "flaky", []string{"Build", "API calls", "503 answered", "429 answered", "retries after 503", "retries after 429", "build took"}, "fat build (TestFlakyAPI)", fmt.Sprint(calls),
		fmt.Sprint(hits[0]+hits[2]), fmt.Sprint(hits[1]+hits[3]), fmt.Sprint(retries["503"]), fmt.Sprint(retries["429"]), dur(took))
	img := findImage(t, name)
	labtest.RequireClean(t, theLab)
	m, data := readManifest(t, man)
	if m.Image.Snapshots["baseos"] != repos.NewerTimestamp {
		t.Errorf("manifest snapshots %v", m.Image.Snapshots)
	}

	// the secret audit of this build
	auditBuild(t, b, r)
	requireNoSecrets(t, "manifest_output", data)
	n := buildtest.RequireNoSecretsInTree(t, theLab, buildtest.ImageFiles(t, theLab, img.ID), minFatImageFiles)
	disk := buildtest.RequireNoSecretsInImageFile(t, theLab, img.ID)
	t.Logf("secret audit: output %d bytes, PACKER_LOG %d bytes, manifest %d bytes, %d image files, image disk %d bytes: clean",
		len(r.Output()), len(b.logText(t)), len(data), n, disk)
	figure(t, "secrets", []string{"Build", "UI output", "PACKER_LOG", "manifest", "image files scanned", "image disk scanned", "secret hits"}, "fat build (TestFlakyAPI)", kb(len(r.Output())), kb(len(b.logText(t))), kb(len(data)), fmt.Sprint(n), kb(int(disk)), "0")
	if !strings.Contains(r.Output(), "fatimage: done:") {
		t.Errorf("the provisioner did not finish:\n%s", r.Output())
	}
}
