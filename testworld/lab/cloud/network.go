package cloud

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
)

// neutron is the network service. It never calls into compute while
// holding its lock: machine changes (floating IPs) and a server's port
// list are updated by functions it runs after unlocking.
type neutron struct {
	c *Cloud
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

type secgroup struct {
	ID, Name, Description, ProjectID string
	Created                          time.Time
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
		sg := &secgroup{ID: newUUID(), Name: "default", Description: "Default security group", ProjectID: pid, Created: now}
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

// createPort allocates a port on n; nt.mu held.
func (nt *neutron) createPort(n *network, name, projectID string, fixed []fixedIP) (*port, error) {
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
	for _, sg := range nt.secgroups {
		if sg.ProjectID == projectID && sg.Name == "default" {
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

func (nt *neutron) sgJSON(sg *secgroup) obj {
	rules := []obj{}
	for _, dir := range []string{"ingress", "egress"} {
		rules = append(rules, obj{"id": newUUID(), "direction": dir, "ethertype": "IPv4", "protocol": nil,
			"port_range_min": nil, "port_range_max": nil, "remote_ip_prefix": nil, "remote_group_id": nil,
			"security_group_id": sg.ID, "tenant_id": sg.ProjectID, "project_id": sg.ProjectID, "description": ""})
	}
	return obj{"id": sg.ID, "name": sg.Name, "description": sg.Description, "tenant_id": sg.ProjectID, "project_id": sg.ProjectID,
		"security_group_rules": rules, "stateful": true, "tags": []string{}, "created_at": tsZ(sg.Created),
		"updated_at": tsZ(sg.Created), "revision_number": 1}
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
	switch segs[0] {
	case "extensions":
		exts := []obj{}
		for _, a := range []string{"external-net", "router", "security-group", "port-security", "binding", "standard-attr-description",
			"standard-attr-revisions", "standard-attr-timestamp", "standard-attr-tag", "extra_dhcp_opt", "allowed-address-pairs",
			"revision-if-match", "quotas", "agent", "availability_zone", "network_availability_zone", "dns-integration", "subnet_allocation"} {
			exts = append(exts, obj{"alias": a, "name": a, "description": a, "updated": "2013-01-20T00:00:00-00:00", "links": []obj{}})
		}
		writeJSON(w, http.StatusOK, obj{"extensions": exts})
	case "networks":
		nt.serveNetworks(w, r, segs[1:], t)
	case "subnets":
		nt.serveSubnets(w, r, segs[1:], t)
	case "ports":
		nt.servePorts(w, r, segs[1:], t)
	case "floatingips":
		nt.serveFIPs(w, r, segs[1:], t)
	case "quotas":
		nt.serveQuotas(w, r, segs[1:], t)
	case "security-groups":
		nt.mu.Lock()
		defer nt.mu.Unlock()
		if len(segs) == 2 {
			sg := nt.secgroups[segs[1]]
			if sg == nil || r.Method != http.MethodGet {
				fail(w, svc, http.StatusNotFound, "SecurityGroupNotFound", "Security group "+segs[1]+" does not exist")
				return
			}
			writeJSON(w, http.StatusOK, obj{"security_group": nt.sgJSON(sg)})
			return
		}
		out := []obj{}
		for _, sg := range nt.secgroups {
			if sg.ProjectID == t.project.ID && filterOK(r, map[string]string{"id": sg.ID, "name": sg.Name, "project_id": sg.ProjectID, "tenant_id": sg.ProjectID}) {
				out = append(out, nt.sgJSON(sg))
			}
		}
		writeJSON(w, http.StatusOK, obj{"security_groups": out})
	case "routers", "security-group-rules", "trunks", "qos", "network-ip-availabilities", "agents", "availability_zones", "subnetpools":
		if len(segs) == 1 && r.Method == http.MethodGet {
			writeJSON(w, http.StatusOK, obj{strings.ReplaceAll(segs[0], "-", "_"): []obj{}})
			return
		}
		notFoundPath(w, r, svc)
	default:
		notFoundPath(w, r, svc)
	}
}

func boolStr(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

func (nt *neutron) serveNetworks(w http.ResponseWriter, r *http.Request, segs []string, t *token) {
	nt.mu.Lock()
	defer nt.mu.Unlock()
	if r.Method != http.MethodGet {
		methodNotAllowed(w, SvcNetwork)
		return
	}
	if len(segs) == 1 {
		n := nt.networks[segs[0]]
		if n == nil {
			fail(w, SvcNetwork, http.StatusNotFound, "NetworkNotFound", "Network "+segs[0]+" could not be found.")
			return
		}
		writeJSON(w, http.StatusOK, obj{"network": nt.networkJSON(n, t)})
		return
	}
	out := []obj{}
	for _, n := range []*network{nt.labNet, nt.publicNet} {
		// router:external and shared are booleans (any case); the rest
		// compare exactly through filterOK
		ext := boolStr(n.External)
		q := r.URL.Query()
		if v := q.Get("router:external"); v != "" && !strings.EqualFold(v, ext) {
			continue
		}
		if v := q.Get("shared"); v != "" && !strings.EqualFold(v, ext) {
			continue
		}
		if filterOK(r, map[string]string{"id": n.ID, "name": n.Name, "status": "ACTIVE"}) {
			out = append(out, nt.networkJSON(n, t))
		}
	}
	writeJSON(w, http.StatusOK, obj{"networks": out})
}

func (nt *neutron) serveSubnets(w http.ResponseWriter, r *http.Request, segs []string, t *token) {
	nt.mu.Lock()
	defer nt.mu.Unlock()
	if r.Method != http.MethodGet {
		methodNotAllowed(w, SvcNetwork)
		return
	}
	if len(segs) == 1 {
		s := nt.subnets[segs[0]]
		if s == nil {
			fail(w, SvcNetwork, http.StatusNotFound, "SubnetNotFound", "Subnet "+segs[0]+" could not be found.")
			return
		}
		writeJSON(w, http.StatusOK, obj{"subnet": nt.subnetJSON(s, t)})
		return
	}
	out := []obj{}
	for _, n := range []*network{nt.labNet, nt.publicNet} {
		s := nt.subnets[n.SubnetIDs[0]]
		if filterOK(r, map[string]string{"id": s.ID, "name": s.Name, "network_id": s.NetworkID, "cidr": s.CIDR.String(), "ip_version": "4"}) {
			out = append(out, nt.subnetJSON(s, t))
		}
	}
	writeJSON(w, http.StatusOK, obj{"subnets": out})
}

type portBody struct {
	Port struct {
		Name        *string `json:"name"`
		NetworkID   string  `json:"network_id"`
		DeviceID    *string `json:"device_id"`
		DeviceOwner *string `json:"device_owner"`
		AdminUp     *bool   `json:"admin_state_up"`
		FixedIPs    []struct {
			SubnetID  string `json:"subnet_id"`
			IPAddress string `json:"ip_address"`
		} `json:"fixed_ips"`
		SecurityGroups *[]string `json:"security_groups"`
	} `json:"port"`
}

func (nt *neutron) servePorts(w http.ResponseWriter, r *http.Request, segs []string, t *token) {
	const svc = SvcNetwork
	var after []func()
	nt.mu.Lock()
	defer func() { nt.mu.Unlock(); runAll(after) }()
	if len(segs) == 0 {
		switch r.Method {
		case http.MethodGet:
			out := []obj{}
			for _, p := range sortedPorts(nt.ports) {
				f := map[string]string{"id": p.ID, "name": p.Name, "network_id": p.NetworkID, "device_id": p.DeviceID,
					"device_owner": p.DeviceOwner, "mac_address": p.MAC, "status": p.status(), "project_id": p.ProjectID, "tenant_id": p.ProjectID}
				if p.ProjectID == t.project.ID && filterOK(r, f) {
					out = append(out, nt.portJSON(p))
				}
			}
			writeJSON(w, http.StatusOK, obj{"ports": out})
		case http.MethodPost:
			var b portBody
			if err := decodeBody(r, &b); err != nil {
				fail(w, svc, http.StatusBadRequest, "", err.Error())
				return
			}
			n := nt.networks[b.Port.NetworkID]
			if n == nil {
				fail(w, svc, http.StatusNotFound, "NetworkNotFound", "Network "+b.Port.NetworkID+" could not be found.")
				return
			}
			var fixed []fixedIP
			for _, f := range b.Port.FixedIPs {
				fixed = append(fixed, fixedIP{SubnetID: f.SubnetID, IP: f.IPAddress})
			}
			name := ""
			if b.Port.Name != nil {
				name = *b.Port.Name
			}
			p, err := nt.createPort(n, name, t.project.ID, fixed)
			if err != nil {
				fail(w, svc, http.StatusConflict, "IpAddressAlreadyAllocated", err.Error())
				return
			}
			if b.Port.DeviceID != nil {
				p.DeviceID = *b.Port.DeviceID
			}
			if b.Port.DeviceOwner != nil {
				p.DeviceOwner = *b.Port.DeviceOwner
			}
			if b.Port.AdminUp != nil {
				p.AdminUp = *b.Port.AdminUp
			}
			if b.Port.SecurityGroups != nil {
				p.SecurityGroups = *b.Port.SecurityGroups
			}
			writeJSON(w, http.StatusCreated, obj{"port": nt.portJSON(p)})
		default:
			methodNotAllowed(w, svc)
		}
		return
	}
	p := nt.ports[segs[0]]
	if p == nil || len(segs) != 1 {
		fail(w, svc, http.StatusNotFound, "PortNotFound", "Port "+segs[0]+" could not be found.")
		return
	}
	switch r.Method {
	case http.MethodGet:
		writeJSON(w, http.StatusOK, obj{"port": nt.portJSON(p)})
	case http.MethodPut:
		var b portBody
		if err := decodeBody(r, &b); err != nil {
			fail(w, svc, http.StatusBadRequest, "", err.Error())
			return
		}
		if b.Port.Name != nil {
			p.Name = *b.Port.Name
		}
		if b.Port.DeviceID != nil {
			p.DeviceID = *b.Port.DeviceID
		}
		if b.Port.DeviceOwner != nil {
			p.DeviceOwner = *b.Port.DeviceOwner
		}
		if b.Port.AdminUp != nil {
			p.AdminUp = *b.Port.AdminUp
		}
		if b.Port.SecurityGroups != nil {
			p.SecurityGroups = *b.Port.SecurityGroups
		}
		p.Updated = time.Now()
		p.Revision++
		writeJSON(w, http.StatusOK, obj{"port": nt.portJSON(p)})
	case http.MethodDelete:
		if p.DeviceID != "" {
			// Neutron allows this (Nova notices); keep the server consistent.
			dev, pid := p.DeviceID, p.ID
			after = append(after, func() { nt.c.compute.portDeleted(dev, pid) })
		}
		after = append(after, nt.deletePort(p)...)
		w.WriteHeader(http.StatusNoContent)
	default:
		methodNotAllowed(w, svc)
	}
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

type fipBody struct {
	FloatingIP struct {
		FloatingNetworkID string  `json:"floating_network_id"`
		FloatingIPAddress string  `json:"floating_ip_address"`
		PortID            *string `json:"port_id"`
		FixedIPAddress    string  `json:"fixed_ip_address"`
		Description       *string `json:"description"`
	} `json:"floatingip"`
}

func (nt *neutron) serveFIPs(w http.ResponseWriter, r *http.Request, segs []string, t *token) {
	const svc = SvcNetwork
	var after []func()
	nt.mu.Lock()
	defer func() { nt.mu.Unlock(); runAll(after) }()
	// associate f with the port (nt.mu held); writes an error and returns false on failure
	associate := func(f *floatingIP, portID, fixed string) bool {
		p := nt.ports[portID]
		if p == nil {
			fail(w, svc, http.StatusNotFound, "PortNotFound", "Port "+portID+" could not be found.")
			return false
		}
		if p.NetworkID == f.NetworkID || len(p.FixedIPs) == 0 {
			fail(w, svc, http.StatusBadRequest, "BadRequest", "Port "+portID+" has no suitable fixed IP address.")
			return false
		}
		if fixed == "" {
			fixed = p.FixedIPs[0].IP
		}
		for _, o := range nt.fips {
			if o != f && o.PortID == portID && o.FixedIP == fixed {
				fail(w, svc, http.StatusConflict, "FloatingIPPortAlreadyAssociated", "Cannot associate floating IP "+f.IP+" with port "+portID+": fixed IP "+fixed+" already has floating IP "+o.IP+".")
				return false
			}
		}
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
		return true
	}
	if len(segs) == 0 {
		switch r.Method {
		case http.MethodGet:
			out := []obj{}
			for _, f := range sortedFIPs(nt.fips) {
				fm := map[string]string{"id": f.ID, "floating_ip_address": f.IP, "floating_network_id": f.NetworkID,
					"port_id": f.PortID, "fixed_ip_address": f.FixedIP, "status": f.status(), "project_id": f.ProjectID, "tenant_id": f.ProjectID}
				if f.ProjectID == t.project.ID && listed(f.listable) && filterOK(r, fm) {
					out = append(out, nt.fipJSON(f))
				}
			}
			writeJSON(w, http.StatusOK, obj{"floatingips": out})
		case http.MethodPost:
			var b fipBody
			if err := decodeBody(r, &b); err != nil {
				fail(w, svc, http.StatusBadRequest, "", err.Error())
				return
			}
			// Neutron reserves the quota before the plugin looks at the request.
			if e := nt.checkFIPQuota(t.project.ID); e != nil {
				fail(w, svc, e.status, "OverQuota", e.msg)
				return
			}
			n := nt.networks[b.FloatingIP.FloatingNetworkID]
			if n == nil {
				fail(w, svc, http.StatusNotFound, "NetworkNotFound", "Network "+b.FloatingIP.FloatingNetworkID+" could not be found.")
				return
			}
			if !n.External {
				fail(w, svc, http.StatusBadRequest, "BadRequest", "Bad floatingip request: Network "+n.ID+" is not a valid external network.")
				return
			}
			ip, err := nt.subnets[n.SubnetIDs[0]].alloc(b.FloatingIP.FloatingIPAddress)
			if err != nil {
				fail(w, svc, http.StatusConflict, "IpAddressAlreadyAllocated", err.Error())
				return
			}
			now := time.Now()
			f := &floatingIP{ID: newUUID(), IP: ip, NetworkID: n.ID, ProjectID: t.project.ID, Created: now, Updated: now, Revision: 1}
			if b.FloatingIP.Description != nil {
				f.Description = *b.FloatingIP.Description
			}
			if b.FloatingIP.PortID != nil && *b.FloatingIP.PortID != "" {
				if !associate(f, *b.FloatingIP.PortID, b.FloatingIP.FixedIPAddress) {
					nt.subnets[n.SubnetIDs[0]].release(ip)
					return
				}
			}
			f.listable = nt.c.listableAt(now)
			nt.fips[f.ID] = f
			writeJSON(w, http.StatusCreated, obj{"floatingip": nt.fipJSON(f)})
		default:
			methodNotAllowed(w, svc)
		}
		return
	}
	f := nt.fips[segs[0]]
	if f == nil || len(segs) != 1 {
		fail(w, svc, http.StatusNotFound, "FloatingIPNotFound", "Floating IP "+segs[0]+" could not be found")
		return
	}
	switch r.Method {
	case http.MethodGet:
		writeJSON(w, http.StatusOK, obj{"floatingip": nt.fipJSON(f)})
	case http.MethodPut:
		if !revisionMatches(w, r, f.Revision) {
			return
		}
		var raw struct {
			FloatingIP map[string]any `json:"floatingip"`
		}
		if err := decodeBody(r, &raw); err != nil {
			fail(w, svc, http.StatusBadRequest, "", err.Error())
			return
		}
		if d, ok := raw.FloatingIP["description"].(string); ok {
			f.Description = d
		}
		if pv, ok := raw.FloatingIP["port_id"]; ok {
			pid, _ := pv.(string)
			fixed, _ := raw.FloatingIP["fixed_ip_address"].(string)
			if pid == "" {
				after = append(after, nt.disassociate(f)...)
			} else if !associate(f, pid, fixed) {
				return
			}
		}
		writeJSON(w, http.StatusOK, obj{"floatingip": nt.fipJSON(f)})
	case http.MethodDelete:
		after = nt.disassociate(f)
		nt.subnets[nt.networks[f.NetworkID].SubnetIDs[0]].release(f.IP)
		delete(nt.fips, f.ID)
		w.WriteHeader(http.StatusNoContent)
	default:
		methodNotAllowed(w, svc)
	}
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
