package bench

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/buildtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/cloud"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/logtail"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
)

// moment is when an interrupt lands, detected the same way for both
// stacks: from the cloud's own state, or from a UI line both builders
// print through the SDK (or each stack's line for the same event).
type moment struct {
	name string
	// reached reports whether the build got there.
	reached func(b *Build, s Stack, name string) bool
}

func cloudHas(kind func(cloud.Status) []cloud.StatusItem) func(*Build, Stack, string) bool {
	return func(_ *Build, _ Stack, name string) bool {
		for _, it := range kind(theLab.Status()) {
			if it.Name == name {
				return true
			}
		}
		return false
	}
}

func printed(ours, official string) func(*Build, Stack, string) bool {
	return func(b *Build, s Stack, _ string) bool {
		want := ours
		if s.Official() {
			want = official
		}
		return strings.Contains(b.Output(), want)
	}
}

var moments = []moment{
	{"server building (cloud lists it)", cloudHas(func(s cloud.Status) []cloud.StatusItem { return s.Servers })},
	{"SSH connected", printed("Connected to SSH!", "Connected to SSH!")},
	{"package transaction running", printed("fatimage: packages", "TASK [Update every package]")},
	{"server stopping", printed("Stopping server", "Stopping server")},
	{"image saving (cloud lists it unfinished)", cloudHas(func(s cloud.Status) []cloud.StatusItem { return s.Images })},
}

// BenchmarkInterrupt sends SIGINT (Ctrl-C to packer's process group) at
// the same moments of ours and of today's stack (official builder + the
// expert playbook) and counts, for each, the cloud resources left once
// packer exited and the cloud settled, images of the build's name, and
// lab secrets in packer's output and PACKER_LOG. Leftovers are deleted
// after counting so the next case starts clean.
func BenchmarkInterrupt(b *testing.B) {
	requireLab(b)
	p := packertest.Setup(b)
	InstallOfficial(b, p)
	w, err := NewWorkload(theLab, "control")
	if err != nil {
		b.Fatal(err)
	}
	stacks := Stacks[:2]
	var rows [][]string
	left := map[string]int{}
	hits := map[string]int{}
	for b.Loop() {
		for _, m := range moments {
			row := []string{m.name}
			for _, s := range stacks {
				n, h, took := interruptAt(b, p, s, w, m)
				left[s.Name] += n
				hits[s.Name] += h
				row = append(row, strconv.Itoa(n), strconv.Itoa(h), secs(took))
			}
			rows = append(rows, row)
		}
	}
	header := []string{"SIGINT at"}
	for _, s := range stacks {
		header = append(header, s.Name+" left", s.Name+" secret hits", s.Name+" exit s")
	}
	t := Table{
		Title:  "Reliability: SIGINT at the same moments, resources left and secret hits (output + PACKER_LOG)",
		Header: header,
		Rows:   rows,
		Notes: []string{fmt.Sprintf("total resources left: fatimage %d, official+expert %d; secret hits: fatimage %d, official+expert %d",
			left["fatimage"], left["official+expert"], hits["fatimage"], hits["official+expert"])},
	}
	t.Print(os.Stdout)
	b.ReportMetric(float64(left["fatimage"]), "fatimage-left")
	b.ReportMetric(float64(left["official+expert"]), "official-left")
}

var momentSeq int

// interruptAt runs one build of s, interrupts it at m and counts what it
// left behind and the secrets its output and log carry.
func interruptAt(b *testing.B, p *packertest.Packer, s Stack, w *Workload, m moment) (left, hits int, took time.Duration) {
	b.Helper()
	momentSeq++
	dir := b.TempDir()
	name := fmt.Sprintf("bench-int-%s-%d-%d", strings.ReplaceAll(s.Name, "+", "-"), momentSeq, time.Now().UnixNano()%1e6)
	if err := s.WriteTemplate(theLab, w, dir, name); err != nil {
		b.Fatal(err)
	}
	before := theLab.Status()
	bd := StartBuild(b, p, theLab, dir)
	deadline := time.Now().Add(30 * time.Minute)
	for !m.reached(bd, s, name) {
		if time.Now().After(deadline) || bd.Exited() {
			b.Fatalf("%s: never reached %q:\n%s", s.Name, m.name, logtail.Lines(bd.Output(), 40))
		}
		time.Sleep(20 * time.Millisecond)
	}
	sent := time.Now()
	if err := bd.Interrupt(); err != nil {
		b.Fatal(err)
	}
	bd.Wait(b, 10*time.Minute)
	took = time.Since(sent)
	settledTotal(theLab)
	after := theLab.Status()
	extra := newItems(before, after)
	imgs := buildtest.ListImages(b, theLab, name)
	left = len(extra)
	for _, img := range imgs {
		if !containsID(extra, img.ID) {
			left++
			extra = append(extra, kindItem{"image", cloud.StatusItem{ID: img.ID, Name: img.Name}})
		}
	}
	log, _ := os.ReadFile(bd.Log)
	hits = SecretHits(theLab, []byte(bd.Output())) + SecretHits(theLab, log)
	if left > 0 {
		b.Logf("%s at %q left: %v", s.Name, m.name, extra)
		purge(b, extra)
	}
	return left, hits, took
}

type kindItem struct {
	kind string
	cloud.StatusItem
}

func containsID(items []kindItem, id string) bool {
	for _, it := range items {
		if it.ID == id {
			return true
		}
	}
	return false
}

// newItems lists the resources in after that were not in before.
func newItems(before, after cloud.Status) []kindItem {
	var out []kindItem
	for _, k := range []struct {
		kind string
		get  func(cloud.Status) []cloud.StatusItem
	}{
		{"server", func(s cloud.Status) []cloud.StatusItem { return s.Servers }},
		{"volume", func(s cloud.Status) []cloud.StatusItem { return s.Volumes }},
		{"keypair", func(s cloud.Status) []cloud.StatusItem { return s.Keypairs }},
		{"floating ip", func(s cloud.Status) []cloud.StatusItem { return s.FloatingIPs }},
		{"port", func(s cloud.Status) []cloud.StatusItem { return s.Ports }},
		{"image", func(s cloud.Status) []cloud.StatusItem { return s.Images }},
	} {
		old := map[string]bool{}
		for _, it := range k.get(before) {
			old[it.ID] = true
		}
		for _, it := range k.get(after) {
			if !old[it.ID] {
				out = append(out, kindItem{k.kind, it})
			}
		}
	}
	return out
}

// purge deletes leftovers with the official OpenStack CLI.
func purge(b *testing.B, items []kindItem) {
	b.Helper()
	for _, it := range items {
		var args []string
		switch it.kind {
		case "server":
			args = []string{"server", "delete", "--wait", it.ID}
		case "volume":
			args = []string{"volume", "delete", "--force", it.ID}
		case "keypair":
			args = []string{"keypair", "delete", it.Name}
		case "floating ip":
			args = []string{"floating", "ip", "delete", it.ID}
		case "port":
			args = []string{"port", "delete", it.ID}
		case "image":
			args = []string{"image", "delete", it.ID}
		}
		cmd := exec.Command("openstack", args...)
		cmd.Env = append(os.Environ(), theLab.Environ()...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Logf("purging %s %s: %v %s", it.kind, it.ID, err, out)
		}
	}
	settledTotal(theLab)
}
