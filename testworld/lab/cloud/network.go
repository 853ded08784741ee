package cloud

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// neutron is the network service. It never calls into compute while
// holding its lock: machine changes (floating IPs) and a server's port
// list are updated by functions it runs after unlocking.
type neutron struct {
	c  *Cloud
	rt *router // the v2.0 API below authentication
	// labNet and publicNet (and their subnets' identity) are fixed at New.
	labNet, publicNet *network

	mu        sync.Mutex
	networks  map[string]*network
	subnets   map[string]*subnet
	ports     map[string]*port
	fips      map[string]*floatingIP
	secgroups map[string]*secgroup
	quotas    quotas
}

func newNeutron(c *Cloud, projectIDs []string) (*neutron, error) {
	nt := &neutron{c: c, networks: map[string]*network{}, subnets: map[string]*subnet{},
		ports: map[string]*port{}, fips: map[string]*floatingIP{}, secgroups: map[string]*secgroup{},
		quotas: newQuotas(neutronQuotaDefaults)}
	nt.rt = nt.routes()
	if err := nt.initNetwork(projectIDs); err != nil {
		return nil, err
	}
	return nt, nil
}

type network struct {
	ID, Name  string
	External  bool
	SubnetIDs []string
	Created   time.Time
}

type subnet struct {
	ID, Name, NetworkID string
	CIDR                netip.Prefix
	Gateway             netip.Addr
	next                netip.Addr // allocation cursor
	used                map[netip.Addr]bool
	Created             time.Time
}

type fixedIP struct {
	SubnetID string
	IP       string
}

type port struct {
	ID, Name, NetworkID, MAC string
	FixedIPs                 []fixedIP
	DeviceID, DeviceOwner    string
	ProjectID                string
	AdminUp                  bool
	SecurityGroups           []string
	Created, Updated         time.Time
	Revision                 int
}

func (p *port) status() string {
	if p.DeviceID != "" {
		return "ACTIVE"
	}
	return "DOWN"
}

type floatingIP struct {
	ID, IP, NetworkID string
	PortID, FixedIP   string
	ProjectID         string
	Description       string
	Created, Updated  time.Time
	Revision          int
	listable          time.Time
}

func (f *floatingIP) status() string {
	if f.PortID != "" {
		return "ACTIVE"
	}
	return "DOWN"
}

func (nt *neutron) newSubnet(name, netID, cidr, gw string) (*subnet, error) {
	pfx, err := netip.ParsePrefix(cidr)
	if err != nil {
		return nil, fmt.Errorf("cloud: bad CIDR %q: %v", cidr, err)
	}
	pfx = pfx.Masked()
	g, err := netip.ParseAddr(gw)
	if err != nil {
		return nil, fmt.Errorf("cloud: bad gateway %q: %v", gw, err)
	}
	s := &subnet{ID: newUUID(), Name: name, NetworkID: netID, CIDR: pfx, Gateway: g, used: map[netip.Addr]bool{g: true}, Created: time.Now()}
	s.next = pfx.Addr().Next()
	return s, nil
}

func (nt *neutron) initNetwork(projectIDs []string) error {
	now := time.Now()
	nt.labNet = &network{ID: newUUID(), Name: "lab-net", Created: now}
	nt.publicNet = &network{ID: newUUID(), Name: "public", External: true, Created: now}
	ls, err := nt.newSubnet("lab-subnet", nt.labNet.ID, nt.c.o.FixedCIDR, nt.c.o.FixedGateway)
	if err != nil {
		return err
	}
	ps, err := nt.newSubnet("public-subnet", nt.publicNet.ID, nt.c.o.FloatingCIDR, nt.c.o.FloatingGateway)
	if err != nil {
		return err
	}
	// skip the first few addresses of the fixed range (dhcp, etc.)
	for i := 0; i < 8; i++ {
		ls.next = ls.next.Next()
	}
	nt.labNet.SubnetIDs = []string{ls.ID}
	nt.publicNet.SubnetIDs = []string{ps.ID}
	nt.networks[nt.labNet.ID], nt.networks[nt.publicNet.ID] = nt.labNet, nt.publicNet
	nt.subnets[ls.ID], nt.subnets[ps.ID] = ls, ps
	for _, pid := range projectIDs {
		sg := newSecgroup("default", "Default security group", pid)
		nt.secgroups[sg.ID] = sg
	}
	return nil
}

// allocIP allocates an address from s (or the given one); nt.mu held.
func (s *subnet) alloc(want string) (string, error) {
	if want != "" {
		a, err := netip.ParseAddr(want)
		if err != nil || !s.CIDR.Contains(a) {
			return "", fmt.Errorf("IP address %s is not a valid IP for the specified subnet.", want)
		}
		if s.used[a] {
			return "", fmt.Errorf("IP address %s already allocated in subnet %s", want, s.ID)
		}
		s.used[a] = true
		return a.String(), nil
	}
	start := s.next
	for a := start; ; {
		if !s.CIDR.Contains(a) {
			a = s.CIDR.Addr().Next()
		}
		nxt := a.Next()
		if !s.used[a] && s.CIDR.Contains(nxt) { // skip broadcast
			s.used[a] = true
			s.next = nxt
			return a.String(), nil
		}
		a = nxt
		if a == start {
			return "", fmt.Errorf("No more IP addresses available on network %s.", s.NetworkID)
		}
	}
}

func (s *subnet) release(ip string) {
	if a, err := netip.ParseAddr(ip); err == nil && a != s.Gateway {
		delete(s.used, a)
	}
}

func randomMAC() string {
	var b [3]byte
	rand.Read(b[:])
	return fmt.Sprintf("fa:16:3e:%02x:%02x:%02x", b[0], b[1], b[2])
}

// createPort allocates a port on n in groups (nil: the project's
// default group); nt.mu held.
func (nt *neutron) createPort(n *network, name, projectID string, fixed []fixedIP, groups []string) (*port, error) {
	p := &port{ID: newUUID(), Name: name, NetworkID: n.ID, MAC: randomMAC(), ProjectID: projectID, AdminUp: true, Created: time.Now(), Revision: 1}
	p.Updated = p.Created
	if len(fixed) == 0 && len(n.SubnetIDs) > 0 {
		fixed = []fixedIP{{SubnetID: n.SubnetIDs[0]}}
	}
	for _, f := range fixed {
		sid := f.SubnetID
		if sid == "" {
			sid = n.SubnetIDs[0]
		}
		s := nt.subnets[sid]
		if s == nil || s.NetworkID != n.ID {
			nt.releasePort(p)
			return nil, fmt.Errorf("Invalid input for fixed_ips: subnet %s not on network %s", sid, n.ID)
		}
		ip, err := s.alloc(f.IP)
		if err != nil {
			nt.releasePort(p)
			return nil, err
		}
		p.FixedIPs = append(p.FixedIPs, fixedIP{SubnetID: s.ID, IP: ip})
	}
	p.SecurityGroups = groups
	for _, sg := range nt.secgroups {
		if groups == nil && sg.ProjectID == projectID && sg.Name == "default" {
			p.SecurityGroups = []string{sg.ID}
		}
	}
	nt.ports[p.ID] = p
	return p, nil
}

func (nt *neutron) releasePort(p *port) {
	for _, f := range p.FixedIPs {
		if s := nt.subnets[f.SubnetID]; s != nil {
			s.release(f.IP)
		}
	}
}

// deletePort removes p, disassociating floating IPs; nt.mu held. Returns
// hypervisor calls to make after unlocking.
func (nt *neutron) deletePort(p *port) []func() {
	var after []func()
	for _, f := range nt.fips {
		if f.PortID == p.ID {
			after = append(after, nt.disassociate(f)...)
		}
	}
	nt.releasePort(p)
	delete(nt.ports, p.ID)
	return after
}

// disassociate clears f's port; nt.mu held. The returned function takes
// the address off the server's machine once nt.mu is released.
func (nt *neutron) disassociate(f *floatingIP) []func() {
	var after []func()
	if p := nt.ports[f.PortID]; p != nil && p.DeviceID != "" {
		dev, ip := p.DeviceID, f.IP
		after = append(after, func() { nt.c.compute.removeFloatingIP(dev, ip) })
	}
	f.PortID, f.FixedIP = "", ""
	f.Updated = time.Now()
	f.Revision++
	return after
}

func runAll(fs []func()) {
	for _, f := range fs {
		f()
	}
}

func (nt *neutron) networkJSON(n *network, t *token) obj {
	return obj{"id": n.ID, "name": n.Name, "status": "ACTIVE", "admin_state_up": true, "subnets": n.SubnetIDs,
		"shared": n.External, "router:external": n.External, "tenant_id": t.project.ID, "project_id": t.project.ID,
		"mtu": 1500, "port_security_enabled": true, "availability_zones": []string{"nova"}, "availability_zone_hints": []string{},
		"ipv4_address_scope": nil, "ipv6_address_scope": nil, "description": "", "tags": []string{},
		"is_default": n.External, "created_at": tsZ(n.Created), "updated_at": tsZ(n.Created), "revision_number": 1,
		"provider:network_type": "flat", "provider:physical_network": n.Name, "provider:segmentation_id": nil, "qos_policy_id": nil}
}

func (nt *neutron) subnetJSON(s *subnet, t *token) obj {
	first := s.CIDR.Addr().Next()
	// last usable: broadcast - 1
	bits := s.CIDR.Addr().BitLen() - s.CIDR.Bits()
	b := s.CIDR.Addr().As4()
	n := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	n |= (1 << bits) - 1
	n--
	last := netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
	return obj{"id": s.ID, "name": s.Name, "network_id": s.NetworkID, "cidr": s.CIDR.String(), "gateway_ip": s.Gateway.String(),
		"ip_version": 4, "enable_dhcp": true, "dns_nameservers": []string{}, "host_routes": []obj{},
		"allocation_pools": []obj{{"start": first.String(), "end": last.String()}}, "tenant_id": t.project.ID, "project_id": t.project.ID,
		"ipv6_ra_mode": nil, "ipv6_address_mode": nil, "subnetpool_id": nil, "description": "", "tags": []string{},
		"service_types": []string{}, "created_at": tsZ(s.Created), "updated_at": tsZ(s.Created), "revision_number": 1}
}

func (nt *neutron) portJSON(p *port) obj {
	fips := []obj{}
	for _, f := range p.FixedIPs {
		fips = append(fips, obj{"subnet_id": f.SubnetID, "ip_address": f.IP})
	}
	sgs := p.SecurityGroups
	if sgs == nil {
		sgs = []string{}
	}
	return obj{"id": p.ID, "name": p.Name, "network_id": p.NetworkID, "mac_address": p.MAC, "fixed_ips": fips,
		"device_id": p.DeviceID, "device_owner": p.DeviceOwner, "tenant_id": p.ProjectID, "project_id": p.ProjectID,
		"admin_state_up": p.AdminUp, "status": p.status(), "security_groups": sgs, "allowed_address_pairs": []obj{},
		"extra_dhcp_opts": []obj{}, "binding:vnic_type": "normal", "binding:host_id": "", "binding:vif_type": "ovs",
		"binding:vif_details": obj{}, "binding:profile": obj{}, "port_security_enabled": true, "description": "", "tags": []string{},
		"dns_name": "", "dns_assignment": []obj{}, "created_at": tsZ(p.Created), "updated_at": tsZ(p.Updated),
		"revision_number": p.Revision, "qos_policy_id": nil, "propagate_uplink_status": false}
}

func (nt *neutron) fipJSON(f *floatingIP) obj {
	var portID, fixed any
	if f.PortID != "" {
		portID, fixed = f.PortID, f.FixedIP
	}
	return obj{"id": f.ID, "floating_ip_address": f.IP, "floating_network_id": f.NetworkID, "router_id": nil,
		"port_id": portID, "fixed_ip_address": fixed, "status": f.status(), "tenant_id": f.ProjectID, "project_id": f.ProjectID,
		"description": f.Description, "tags": []string{}, "port_details": nil, "port_forwardings": []obj{},
		"dns_domain": "", "dns_name": "", "qos_policy_id": nil,
		"created_at": tsZ(f.Created), "updated_at": tsZ(f.Updated), "revision_number": f.Revision}
}

// filterOK checks Neutron-style query filters (repeatable keys = OR).
func filterOK(r *http.Request, fields map[string]string) bool {
	q := r.URL.Query()
	for k, vals := range q {
		v, ok := fields[k]
		if !ok {
			continue
		}
		hit := false
		for _, want := range vals {
			if want == v {
				hit = true
			}
		}
		if !hit {
			return false
		}
	}
	return true
}

func (nt *neutron) serve(w http.ResponseWriter, r *http.Request, segs []string) {
	const svc = SvcNetwork
	ver := obj{"id": "v2.0", "status": "CURRENT", "links": []obj{{"rel": "self", "href": nt.c.url + "/networking/v2.0/"}}}
	if len(segs) == 0 {
		writeJSON(w, http.StatusOK, obj{"versions": []obj{ver}})
		return
	}
	if segs[0] != "v2.0" {
		notFoundPath(w, r, svc)
		return
	}
	segs = segs[1:]
	t := nt.c.authenticate(w, r)
	if t == nil {
		return
	}
	if len(segs) == 0 {
		res := []obj{}
		for _, n := range []string{"network", "subnet", "port", "floatingip", "security_group", "router"} {
			res = append(res, obj{"name": n, "collection": n + "s", "links": []obj{{"rel": "self", "href": nt.c.url + "/networking/v2.0/" + n + "s"}}})
		}
		writeJSON(w, http.StatusOK, obj{"resources": res})
		return
	}
	// strip optional ".json" suffix used by some clients
	segs[len(segs)-1] = strings.TrimSuffix(segs[len(segs)-1], ".json")
	nt.rt.serve(w, r, cleanPath(append([]string{"networking", "v2.0"}, segs...)), &caller{t: t})
}

func boolStr(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

func removeStr(ss []string, s string) []string {
	out := ss[:0:0]
	for _, x := range ss {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}
