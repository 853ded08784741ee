package guests

import (
	"context"
	"time"
)

// FloatingSource reads the floating IPs Neutron has associated: floating
// address -> fixed address.
type FloatingSource interface {
	FloatingIPs(ctx context.Context) (map[string]string, error)
}

// followFloatingIPs routes each floating IP Neutron associates with a
// guest's fixed IP to the guest, and removes it when Neutron no longer has
// it, once a second: what the L3 agent does on a router's gateway (the
// tier runs no agent, docs/lab.md).
func (h *Host) followFloatingIPs(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		fips, err := h.opts.Floating.FloatingIPs(ctx)
		if err != nil {
			h.opts.Logf("guests: reading floating IPs: %v", err)
			continue
		}
		h.syncFloating(fips)
	}
}

func (h *Host) syncFloating(fips map[string]string) {
	h.mu.Lock()
	gs := make([]*guest, 0, len(h.servers))
	for _, g := range h.servers {
		if g.machine != nil {
			gs = append(gs, g)
		}
	}
	h.mu.Unlock()
	for _, g := range gs {
		for fip := range g.fips {
			if fips[fip] != g.spec.FixedIP {
				if err := g.machine.RemoveFloatingIP(fip); err != nil {
					h.opts.Logf("guests: %s: %v", g.spec.UUID, err)
				}
				delete(g.fips, fip)
			}
		}
		for fip, fixed := range fips {
			if fixed == g.spec.FixedIP && !g.fips[fip] {
				if err := g.machine.AddFloatingIP(fip); err != nil {
					h.opts.Logf("guests: %s: %v", g.spec.UUID, err)
					continue
				}
				g.fips[fip] = true
				h.opts.Logf("guests: %s: floating IP %s", g.spec.UUID, fip)
			}
		}
	}
}
