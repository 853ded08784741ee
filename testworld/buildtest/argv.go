package buildtest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/secretaudit"
)

// argvInterval is how often ArgvSampler reads the VMs' command lines: a
// command that carries a secret for longer is seen (a credential on
// curl's command line lives as long as the download).
const argvInterval = 20 * time.Millisecond

// ArgvSampler reads the command line of every process in the lab's VMs,
// as `ps` on the VM would show it to any user, every argvInterval while a
// build runs, and keeps which secret forms it saw there.
type ArgvSampler struct {
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
	mu       sync.Mutex
	rep      ArgvReport
}

// ArgvReport is what a sampler saw: how many samples and distinct
// command lines, and each secret form found with the program (argv[0])
// whose command line carried it.
type ArgvReport struct {
	Samples, CommandLines int
	Found                 map[string]string
}

// SampleArgv starts sampling the lab's VMs; it stops when Stop is called
// or the test ends.
func SampleArgv(t testing.TB, l *lab.Lab) *ArgvSampler {
	s := &ArgvSampler{stop: make(chan struct{}), done: make(chan struct{}), rep: ArgvReport{Found: map[string]string{}}}
	go s.run(l)
	t.Cleanup(func() { s.Stop() })
	return s
}

func (s *ArgvSampler) run(l *lab.Lab) {
	defer close(s.done)
	seen := map[string]bool{}
	tick := time.NewTicker(argvInterval)
	defer tick.Stop()
	for {
		forms := Secrets(l) // tests add credentials while the build runs
		for _, pid := range l.VMs.PIDs() {
			raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if err != nil || len(raw) == 0 || seen[string(raw)] {
				continue
			}
			seen[string(raw)] = true
			argv0, _, _ := bytes.Cut(raw, []byte{0})
			s.mu.Lock()
			for _, name := range secretaudit.Find(raw, forms) {
				s.rep.Found[name] = filepath.Base(string(argv0))
			}
			s.mu.Unlock()
		}
		s.mu.Lock()
		s.rep.Samples++
		s.rep.CommandLines = len(seen)
		s.mu.Unlock()
		select {
		case <-s.stop:
			return
		case <-tick.C:
		}
	}
}

// Stop ends the sampling (once; later calls return the same report).
func (s *ArgvSampler) Stop() ArgvReport {
	s.stopOnce.Do(func() { close(s.stop) })
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rep
}

// RequireNoSecretsInArgv stops s and fails the test for every secret form
// a VM's command line carried, naming the program, never the secret. It
// returns the report for the test's figures.
func RequireNoSecretsInArgv(t testing.TB, s *ArgvSampler) ArgvReport {
	t.Helper()
	r := s.Stop()
	for name, prog := range r.Found {
		t.Errorf("a command line on the VM (%s) carries the %s", prog, name)
	}
	// A build may end before any VM has a process to read (a refused
	// create, an interrupt); TestSecretAuditFindsALeak proves the sampler
	// sees what a VM runs.
	if r.Samples < 2 {
		t.Errorf("the argv sampler read %d command lines in %d samples: it did not watch the build", r.CommandLines, r.Samples)
	}
	return r
}
