package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ProcMem is the resident memory of the processes of one process group
// whose executable's name starts with a prefix: a packer build's plugin
// processes (packer starts one per component it uses). Each process's
// VmHWM (the kernel's high-water mark of its resident set) is read from
// /proc every interval while it lives, so nothing between samples is
// missed but growth in a process's last interval before it exits; the
// group's resident sets are also summed at each sample, the peak of that
// sum being what the processes held at once.
type ProcMem struct {
	pgid   int
	prefix string
	stop   chan struct{}
	done   chan struct{}

	mu      sync.Mutex
	procs   map[int]*memProc
	peakSum int64 // bytes: the largest sum of VmRSS at one sample
}

type memProc struct {
	args string // argv after the executable: the component it serves
	hwm  int64  // bytes: VmHWM when last read
}

// MemReport is what a ProcMem saw.
type MemReport struct {
	Procs   int   // processes seen
	PeakSum int64 // bytes: the largest sum of their VmRSS at one sample
	MaxHWM  int64 // bytes: the largest VmHWM of one process
	MaxArgs string
	SumHWM  int64 // bytes: the VmHWMs summed (a bound on PeakSum)
}

// WatchProcs samples the processes of group pgid named prefix* every
// interval until Stop.
func WatchProcs(pgid int, prefix string, interval time.Duration) *ProcMem {
	m := &ProcMem{pgid: pgid, prefix: prefix, stop: make(chan struct{}), done: make(chan struct{}), procs: map[int]*memProc{}}
	go func() {
		defer close(m.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			m.sample()
			select {
			case <-m.stop:
				return
			case <-t.C:
			}
		}
	}()
	return m
}

// Stop ends the sampling (after one last sample) and reports.
func (m *ProcMem) Stop() MemReport {
	close(m.stop)
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	r := MemReport{Procs: len(m.procs), PeakSum: m.peakSum}
	for _, p := range m.procs {
		r.SumHWM += p.hwm
		if p.hwm > r.MaxHWM {
			r.MaxHWM, r.MaxArgs = p.hwm, p.args
		}
	}
	return r
}

func (m *ProcMem) sample() {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	var sum int64
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pgrpOf(pid) != m.pgid {
			continue
		}
		argv := procArgv(pid)
		if len(argv) == 0 || !strings.HasPrefix(filepath.Base(argv[0]), m.prefix) {
			continue
		}
		hwm, rss, ok := procMem(pid)
		if !ok {
			continue // exited between the reads
		}
		sum += rss
		m.mu.Lock()
		p := m.procs[pid]
		if p == nil {
			p = &memProc{args: strings.Join(argv[1:], " ")}
			m.procs[pid] = p
		}
		p.hwm = max(p.hwm, hwm)
		m.mu.Unlock()
	}
	m.mu.Lock()
	m.peakSum = max(m.peakSum, sum)
	m.mu.Unlock()
}

// pgrpOf is pid's process group, -1 when it cannot be read.
func pgrpOf(pid int) int {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 3 {
		return -1
	}
	n, err := strconv.Atoi(f[2])
	if err != nil {
		return -1
	}
	return n
}

func procArgv(pid int) []string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimRight(string(data), "\x00"), "\x00")
}

// procMem reads VmHWM and VmRSS (bytes) from /proc/pid/status.
func procMem(pid int) (hwm, rss int64, ok bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0, false
	}
	for _, l := range strings.Split(string(data), "\n") {
		k, v, found := strings.Cut(l, ":")
		if !found || (k != "VmHWM" && k != "VmRSS") {
			continue
		}
		f := strings.Fields(v) // "123456 kB"
		if len(f) != 2 || f[1] != "kB" {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		if k == "VmHWM" {
			hwm = n << 10
		} else {
			rss = n << 10
		}
	}
	return hwm, rss, hwm > 0
}
