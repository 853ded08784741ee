package cloud

import (
	"sort"
	"time"
)

func sortByCreated[T any](m map[string]T, created func(T) time.Time, id func(T) string) []T {
	out := make([]T, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool {
		ci, cj := created(out[i]), created(out[j])
		if !ci.Equal(cj) {
			return ci.Before(cj)
		}
		return id(out[i]) < id(out[j])
	})
	return out
}

func sortedPorts(m map[string]*port) []*port {
	return sortByCreated(m, func(p *port) time.Time { return p.Created }, func(p *port) string { return p.ID })
}

func sortedGroups(m map[string]*secgroup) []*secgroup {
	return sortByCreated(m, func(g *secgroup) time.Time { return g.Created }, func(g *secgroup) string { return g.ID })
}

func sortedFIPs(m map[string]*floatingIP) []*floatingIP {
	return sortByCreated(m, func(p *floatingIP) time.Time { return p.Created }, func(p *floatingIP) string { return p.ID })
}

func sortedServers(m map[string]*server) []*server {
	return sortByCreated(m, func(p *server) time.Time { return p.Created }, func(p *server) string { return p.ID })
}

func sortedVolumes(m map[string]*volume) []*volume {
	return sortByCreated(m, func(p *volume) time.Time { return p.Created }, func(p *volume) string { return p.ID })
}

// deleteDisk removes a disk nothing refers to any more; a failure leaves a
// directory behind, which the lab's log names (Close removes the lab).
func (c *Cloud) deleteDisk(disk string) {
	if err := c.o.Hypervisor.DeleteDisk(disk); err != nil {
		c.logf("cloud: deleting disk %s: %v", disk, err)
	}
}

// afterMarker is what follows the item whose id is marker in sel (a page
// after the marker); false when no item has that id.
func afterMarker[T any](sel []T, marker string, id func(T) string) ([]T, bool) {
	for i, x := range sel {
		if id(x) == marker {
			return sel[i+1:], true
		}
	}
	return nil, false
}
