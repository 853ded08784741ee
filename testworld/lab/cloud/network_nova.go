package cloud

import (
	"net/http"
	"time"
)

// What the network service offers the compute service. Nova calls these
// with its own lock held (compute comes before network in the lock order),
// so none of them calls back into compute.

// nicRequest is one entry of a server create's "networks".
type nicRequest struct {
	UUID    string `json:"uuid"`
	Port    string `json:"port"`
	FixedIP string `json:"fixed_ip"`
}

// defaultNetworkID is the network "auto" means.
func (nt *neutron) defaultNetworkID() string { return nt.labNet.ID }

// plugServer binds (or creates) one port per request to server id, the
// ports it creates in the server's security groups (names or ids). It
// returns the port ids in order and which of them it created; on failure
// nothing is left behind.
func (nt *neutron) plugServer(id, projectID string, reqs []nicRequest, groups []string) ([]string, map[string]bool, *httpErr) {
	nt.mu.Lock()
	defer nt.mu.Unlock()
	groupIDs, e := nt.groupIDs(projectID, groups)
	if e != nil {
		return nil, nil, e
	}
	var ports []*port
	own := map[string]bool{}
	fail := func(status int, msg string) ([]string, map[string]bool, *httpErr) {
		for _, p := range ports {
			if own[p.ID] {
				nt.releasePort(p)
				delete(nt.ports, p.ID)
			}
		}
		return nil, nil, &httpErr{status, msg}
	}
	for _, n := range reqs {
		if n.Port != "" {
			p := nt.ports[n.Port]
			if p == nil {
				return fail(http.StatusBadRequest, "Port "+n.Port+" could not be found.")
			}
			if p.DeviceID != "" {
				return fail(http.StatusConflict, "Port "+p.ID+" is still in use.")
			}
			ports = append(ports, p)
			continue
		}
		nw := nt.networks[n.UUID]
		if nw == nil {
			return fail(http.StatusBadRequest, "Network "+n.UUID+" could not be found.")
		}
		var fixed []fixedIP
		if n.FixedIP != "" {
			fixed = []fixedIP{{IP: n.FixedIP}}
		}
		p, err := nt.createPort(nw, "", projectID, fixed, groupIDs)
		if err != nil {
			return fail(http.StatusBadRequest, err.Error())
		}
		own[p.ID] = true
		ports = append(ports, p)
	}
	now := time.Now()
	ids := make([]string, 0, len(ports))
	for _, p := range ports {
		p.DeviceID, p.DeviceOwner, p.Updated = id, "compute:nova", now
		ids = append(ids, p.ID)
	}
	return ids, own, nil
}

// unplugServer detaches a deleted server's ports: the ones Nova created go
// (their floating IPs are disassociated), the others are freed. It returns
// the floating IPs that were on those ports, to take off the machine.
func (nt *neutron) unplugServer(portIDs []string, own map[string]bool) []string {
	nt.mu.Lock()
	defer nt.mu.Unlock()
	var ips []string
	now := time.Now()
	for _, pid := range portIDs {
		p := nt.ports[pid]
		if p == nil {
			continue
		}
		for _, f := range nt.fips {
			if f.PortID == p.ID {
				ips = append(ips, f.IP)
				if own[pid] {
					f.PortID, f.FixedIP, f.Updated = "", "", now
					f.Revision++
				}
			}
		}
		if own[pid] {
			nt.releasePort(p)
			delete(nt.ports, p.ID)
		} else {
			p.DeviceID, p.DeviceOwner, p.Updated = "", "", now
		}
	}
	return ips
}

// firstFixedIP is the first fixed address of the first existing port.
func (nt *neutron) firstFixedIP(portIDs []string) string {
	nt.mu.Lock()
	defer nt.mu.Unlock()
	if len(portIDs) > 0 {
		if p := nt.ports[portIDs[0]]; p != nil && len(p.FixedIPs) > 0 {
			return p.FixedIPs[0].IP
		}
	}
	return ""
}

// hasFixedIP says whether one of the ports has ip as its first fixed address.
func (nt *neutron) hasFixedIP(portIDs []string, ip string) bool {
	nt.mu.Lock()
	defer nt.mu.Unlock()
	for _, pid := range portIDs {
		if p := nt.ports[pid]; p != nil && len(p.FixedIPs) > 0 && p.FixedIPs[0].IP == ip {
			return true
		}
	}
	return false
}

// floatingIPsOn lists the floating IPs associated with any of the ports.
func (nt *neutron) floatingIPsOn(portIDs []string) []string {
	nt.mu.Lock()
	defer nt.mu.Unlock()
	var ips []string
	for _, f := range nt.fips {
		if f.PortID != "" && contains(portIDs, f.PortID) {
			ips = append(ips, f.IP)
		}
	}
	return ips
}

// addresses is a server's "addresses" object for its ports.
func (nt *neutron) addresses(portIDs []string) obj {
	nt.mu.Lock()
	defer nt.mu.Unlock()
	addrs := obj{}
	for _, pid := range portIDs {
		p := nt.ports[pid]
		if p == nil {
			continue
		}
		n := nt.networks[p.NetworkID]
		var list []obj
		if prev, ok := addrs[n.Name].([]obj); ok {
			list = prev
		}
		for _, f := range p.FixedIPs {
			list = append(list, obj{"addr": f.IP, "version": 4, "OS-EXT-IPS:type": "fixed", "OS-EXT-IPS-MAC:mac_addr": p.MAC})
			for _, fip := range sortedFIPs(nt.fips) {
				if fip.PortID == p.ID && fip.FixedIP == f.IP {
					list = append(list, obj{"addr": fip.IP, "version": 4, "OS-EXT-IPS:type": "floating", "OS-EXT-IPS-MAC:mac_addr": p.MAC})
				}
			}
		}
		addrs[n.Name] = list
	}
	return addrs
}

// interfaceAttachments is Nova's os-interface list for the ports.
func (nt *neutron) interfaceAttachments(portIDs []string) []obj {
	nt.mu.Lock()
	defer nt.mu.Unlock()
	out := []obj{}
	for _, pid := range portIDs {
		if p := nt.ports[pid]; p != nil {
			fips := []obj{}
			for _, f := range p.FixedIPs {
				fips = append(fips, obj{"subnet_id": f.SubnetID, "ip_address": f.IP})
			}
			out = append(out, obj{"port_state": p.status(), "fixed_ips": fips, "port_id": p.ID, "net_id": p.NetworkID, "mac_addr": p.MAC})
		}
	}
	return out
}

// novaSecurityGroups is Nova's os-security-groups list for a project.
func (nt *neutron) novaSecurityGroups(projectID string) []obj {
	nt.mu.Lock()
	defer nt.mu.Unlock()
	out := []obj{}
	for _, sg := range nt.secgroups {
		if sg.ProjectID == projectID {
			out = append(out, obj{"id": sg.ID, "name": sg.Name, "description": sg.Description, "tenant_id": sg.ProjectID, "rules": []obj{}})
		}
	}
	return out
}

// status lists live ports and floating IPs for Cloud.Status.
func (nt *neutron) status() (fips, ports []StatusItem) {
	nt.mu.Lock()
	defer nt.mu.Unlock()
	fips, ports = []StatusItem{}, []StatusItem{}
	for _, f := range nt.fips {
		fips = append(fips, StatusItem{f.ID, f.IP, f.status()})
	}
	for _, p := range nt.ports {
		ports = append(ports, StatusItem{p.ID, p.Name, p.status()})
	}
	return fips, ports
}
