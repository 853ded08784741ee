package cloud

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

type fipBody struct {
	FloatingIP struct {
		FloatingNetworkID string  `json:"floating_network_id"`
		FloatingIPAddress string  `json:"floating_ip_address"`
		PortID            *string `json:"port_id"`
		FixedIPAddress    string  `json:"fixed_ip_address"`
		Description       *string `json:"description"`
	} `json:"floatingip"`
}

type netHandler = func(w http.ResponseWriter, r *http.Request, c *caller) []func()

// fipRoutes serves /floatingips below p.
func (nt *neutron) fipRoutes(rt *router, p string, notAllowed netHandler) {
	collectionRoutes(nt, rt, p, notAllowed, collection[floatingIP]{
		items: func() map[string]*floatingIP { return nt.fips }, typ: "FloatingIPNotFound", what: "Floating IP",
		list: nt.listFIPs, create: nt.createFIP, update: nt.updateFIP,
		get: func(w http.ResponseWriter, _ *http.Request, _ *caller, f *floatingIP) []func() {
			writeJSON(w, http.StatusOK, obj{"floatingip": nt.fipJSON(f)})
			return nil
		},
		destroy: func(w http.ResponseWriter, _ *http.Request, _ *caller, f *floatingIP) []func() {
			after := nt.disassociate(f)
			nt.subnets[nt.networks[f.NetworkID].SubnetIDs[0]].release(f.IP)
			delete(nt.fips, f.ID)
			w.WriteHeader(http.StatusNoContent)
			return after
		},
	})
}

func (nt *neutron) listFIPs(w http.ResponseWriter, r *http.Request, c *caller) []func() {
	out := []obj{}
	for _, f := range sortedFIPs(nt.fips) {
		fm := map[string]string{"id": f.ID, "floating_ip_address": f.IP, "floating_network_id": f.NetworkID,
			"port_id": f.PortID, "fixed_ip_address": f.FixedIP, "status": f.status(), "project_id": f.ProjectID, "tenant_id": f.ProjectID}
		if f.ProjectID == c.t.project.ID && listed(f.listable) && filterOK(r, fm) {
			out = append(out, nt.fipJSON(f))
		}
	}
	writeJSON(w, http.StatusOK, obj{"floatingips": out})
	return nil
}

func (nt *neutron) createFIP(w http.ResponseWriter, r *http.Request, c *caller) []func() {
	const svc = SvcNetwork
	var b fipBody
	if err := decodeBody(r, &b); err != nil {
		fail(w, svc, http.StatusBadRequest, "", err.Error())
		return nil
	}
	// Neutron reserves the quota before the plugin looks at the request.
	if e := nt.checkFIPQuota(c.t.project.ID); e != nil {
		fail(w, svc, e.status, "OverQuota", e.msg)
		return nil
	}
	n := nt.networks[b.FloatingIP.FloatingNetworkID]
	if n == nil {
		fail(w, svc, http.StatusNotFound, "NetworkNotFound", "Network "+b.FloatingIP.FloatingNetworkID+" could not be found.")
		return nil
	}
	if !n.External {
		fail(w, svc, http.StatusBadRequest, "BadRequest", "Bad floatingip request: Network "+n.ID+" is not a valid external network.")
		return nil
	}
	ip, err := nt.subnets[n.SubnetIDs[0]].alloc(b.FloatingIP.FloatingIPAddress)
	if err != nil {
		fail(w, svc, http.StatusConflict, "IpAddressAlreadyAllocated", err.Error())
		return nil
	}
	now := time.Now()
	f := &floatingIP{ID: newUUID(), IP: ip, NetworkID: n.ID, ProjectID: c.t.project.ID, Created: now, Updated: now, Revision: 1}
	if b.FloatingIP.Description != nil {
		f.Description = *b.FloatingIP.Description
	}
	var after []func()
	if b.FloatingIP.PortID != nil && *b.FloatingIP.PortID != "" {
		var e *netErr
		if after, e = nt.associate(f, *b.FloatingIP.PortID, b.FloatingIP.FixedIPAddress); e != nil {
			nt.subnets[n.SubnetIDs[0]].release(ip)
			e.write(w)
			return nil
		}
	}
	f.listable = nt.c.listableAt(now)
	nt.fips[f.ID] = f
	writeJSON(w, http.StatusCreated, obj{"floatingip": nt.fipJSON(f)})
	return after
}

func (nt *neutron) updateFIP(w http.ResponseWriter, r *http.Request, _ *caller, f *floatingIP) []func() {
	if !revisionMatches(w, r, f.Revision) {
		return nil
	}
	var raw struct {
		FloatingIP map[string]any `json:"floatingip"`
	}
	if err := decodeBody(r, &raw); err != nil {
		fail(w, SvcNetwork, http.StatusBadRequest, "", err.Error())
		return nil
	}
	if d, ok := raw.FloatingIP["description"].(string); ok {
		f.Description = d
	}
	var after []func()
	if pv, ok := raw.FloatingIP["port_id"]; ok {
		pid, _ := pv.(string)
		fixed, _ := raw.FloatingIP["fixed_ip_address"].(string)
		if pid == "" {
			after = nt.disassociate(f)
		} else {
			var e *netErr
			if after, e = nt.associate(f, pid, fixed); e != nil {
				e.write(w)
				return nil
			}
		}
	}
	writeJSON(w, http.StatusOK, obj{"floatingip": nt.fipJSON(f)})
	return after
}

// associate puts f on the port's fixed IP (the first when fixed is
// empty); what it returns runs once nt.mu is released. nt.mu held.
func (nt *neutron) associate(f *floatingIP, portID, fixed string) ([]func(), *netErr) {
	p := nt.ports[portID]
	if p == nil {
		return nil, &netErr{http.StatusNotFound, "PortNotFound", "Port " + portID + " could not be found."}
	}
	if p.NetworkID == f.NetworkID || len(p.FixedIPs) == 0 {
		return nil, &netErr{http.StatusBadRequest, "BadRequest", "Port " + portID + " has no suitable fixed IP address."}
	}
	if fixed == "" {
		fixed = p.FixedIPs[0].IP
	}
	for _, o := range nt.fips {
		if o != f && o.PortID == portID && o.FixedIP == fixed {
			return nil, &netErr{http.StatusConflict, "FloatingIPPortAlreadyAssociated", "Cannot associate floating IP " + f.IP + " with port " + portID + ": fixed IP " + fixed + " already has floating IP " + o.IP + "."}
		}
	}
	var after []func()
	if f.PortID != "" && f.PortID != portID {
		after = append(after, nt.disassociate(f)...)
	}
	f.PortID, f.FixedIP = portID, fixed
	f.Updated = time.Now()
	f.Revision++
	if p.DeviceID != "" {
		dev, ip := p.DeviceID, f.IP
		after = append(after, func() { nt.c.compute.addFloatingIP(dev, ip) })
	}
	return after, nil
}

// revisionMatches applies Neutron's revision-if-match: an update sent with
// "If-Match: revision_number=N" is refused with 412 unless the resource is
// still at revision N, which lets clients claim a resource without a race.
func revisionMatches(w http.ResponseWriter, r *http.Request, current int) bool {
	want, ok := strings.CutPrefix(r.Header.Get("If-Match"), "revision_number=")
	if !ok || want == strconv.Itoa(current) {
		return true
	}
	fail(w, SvcNetwork, http.StatusPreconditionFailed, "RevisionNumberConstraintFailed",
		fmt.Sprintf("Constrained to %s, but current revision is %d", want, current))
	return false
}
