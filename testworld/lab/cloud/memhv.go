package cloud

import (
	"context"
	"fmt"
	"sync"
)

// MemHypervisor is a Hypervisor with nothing behind it: disks are sizes
// and a machine is a power state. It serves a double that answers the API
// only (the real-cloud tier's contract tests run the same checks against
// it and against real OpenStack); the lab's VMs are hypervisor.go's.
type MemHypervisor struct {
	mu       sync.Mutex
	n        int
	disks    map[string]int64
	machines map[string]*memMachine
}

// CloneDisk makes a 1 MiB disk, or one of src's size.
func (h *MemHypervisor) CloneDisk(src string) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.disks == nil {
		h.disks = map[string]int64{}
	}
	size := int64(1 << 20)
	if src != "" {
		s, ok := h.disks[src]
		if !ok {
			return "", fmt.Errorf("no disk %q", src)
		}
		size = s
	}
	h.n++
	id := fmt.Sprintf("mem-disk-%d", h.n)
	h.disks[id] = size
	return id, nil
}

// DeleteDisk forgets a disk.
func (h *MemHypervisor) DeleteDisk(id string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.disks, id)
	return nil
}

// DiskSize is a disk's size.
func (h *MemHypervisor) DiskSize(id string) (int64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.disks[id]
	if !ok {
		return 0, fmt.Errorf("no disk %q", id)
	}
	return s, nil
}

// Boot makes a running machine that does nothing but keep its filter.
func (h *MemHypervisor) Boot(spec MachineSpec, _ func(PowerState)) (Machine, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.machines == nil {
		h.machines = map[string]*memMachine{}
	}
	m := &memMachine{fw: spec.Firewall}
	h.machines[spec.ID] = m
	return m, nil
}

// Firewall is the filter server id's machine has now (nil: none, or no
// such machine).
func (h *MemHypervisor) Firewall(id string) *Firewall {
	h.mu.Lock()
	m := h.machines[id]
	h.mu.Unlock()
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.fw
}

type memMachine struct {
	mu    sync.Mutex
	state PowerState
	fw    *Firewall
}

func (m *memMachine) SetFirewall(fw *Firewall) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fw = fw
	return nil
}

func (m *memMachine) set(s PowerState) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.state = s
	return nil
}
func (m *memMachine) Stop(context.Context) error         { return m.set(PowerShutdown) }
func (m *memMachine) Start(context.Context) error        { return m.set(PowerRunning) }
func (m *memMachine) Reboot(context.Context, bool) error { return m.set(PowerRunning) }
func (m *memMachine) HardReset() error                   { return m.set(PowerRunning) }
func (m *memMachine) Destroy() error                     { return nil }
func (m *memMachine) PowerState() PowerState {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state
}
func (m *memMachine) AddFloatingIP(string) error    { return nil }
func (m *memMachine) RemoveFloatingIP(string) error { return nil }
func (m *memMachine) ConsoleLog() string            { return "" }
