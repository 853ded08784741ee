package vm

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Every manager records the host resources it creates (bridge, network
// namespaces, veths, floating IP routes, security group chains) in a file
// below registryDir, keyed by its random tag and tagged with its process
// (PID and start time). When a process dies without Close (a crashed or killed test), its VMs die with it
// (Pdeathsig), but the network objects stay; the next NewManager on the
// machine removes the objects recorded by managers whose process is gone.
// Only objects this package created are ever touched.
var registryDir = "/run/fatlab-vm"

type registryRecord struct {
	PID    int                 `json:"pid"`
	Start  string              `json:"start"` // /proc/<pid>/stat starttime
	Bridge string              `json:"bridge,omitempty"`
	Netns  map[string]bool     `json:"netns,omitempty"`
	Veths  map[string]bool     `json:"veths,omitempty"`
	Routes map[string][]string `json:"routes,omitempty"` // key -> args of "ip route del"
	Cgroup string              `json:"cgroup,omitempty"` // the manager's cgroup2 directory
	// Firewalls: a machine's host end -> the iptables jumps into its
	// security group chains (firewall.go)
	Firewalls map[string][][]string `json:"firewalls,omitempty"`
}

type registry struct {
	mu   sync.Mutex
	path string
	rec  registryRecord
}

func procStart(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

func newRegistry(tag string) *registry {
	r := &registry{
		path: filepath.Join(registryDir, tag+".json"),
		rec: registryRecord{PID: os.Getpid(), Start: procStart(os.Getpid()),
			Netns: map[string]bool{}, Veths: map[string]bool{}, Routes: map[string][]string{},
			Firewalls: map[string][][]string{}},
	}
	return r
}

// update changes the record and writes it out (errors are only logged by callers).
func (r *registry) update(f func(*registryRecord)) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(&r.rec)
	b, err := json.Marshal(r.rec)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(registryDir, 0o755); err != nil {
		return err
	}
	tmp := r.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, r.path)
}

func (r *registry) remove() {
	r.mu.Lock()
	defer r.mu.Unlock()
	os.Remove(r.path)
}

// sweepStale removes what managers of dead processes left behind.
func sweepStale(logf func(string, ...any)) { sweepStaleIn(registryDir, logf) }

func sweepStaleIn(dir string, logf func(string, ...any)) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var rec registryRecord
		if json.Unmarshal(b, &rec) != nil || rec.PID <= 0 {
			continue
		}
		if st := procStart(rec.PID); st != "" && st == rec.Start {
			continue // owner alive
		}
		logf("vm: removing leftovers of dead manager %s (pid %d)", strings.TrimSuffix(e.Name(), ".json"), rec.PID)
		keys := make([]string, 0, len(rec.Routes))
		for k := range rec.Routes {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			_ = run("ip", append([]string{"route", "del"}, rec.Routes[k]...)...)
		}
		for v, jumps := range rec.Firewalls {
			removeFirewallOf(v, jumps)
		}
		for v := range rec.Veths {
			if _, err := os.Stat("/sys/class/net/" + v); err == nil {
				_ = run("ip", "link", "del", v)
			}
		}
		for n := range rec.Netns {
			if _, err := os.Stat(filepath.Join("/run/netns", n)); err == nil {
				_ = run("ip", "netns", "del", n)
			}
		}
		if rec.Cgroup != "" {
			_ = rmdirTree(rec.Cgroup)
		}
		if rec.Bridge != "" {
			if _, err := os.Stat("/sys/class/net/" + rec.Bridge); err == nil {
				_ = run("ip", "link", "del", rec.Bridge)
			}
		}
		os.Remove(p)
	}
}
