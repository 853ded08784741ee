package cloud

import (
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Security groups as Neutron keeps them, and as its agent enforces them
// on a server's port: the machine gets its port's filter (Firewall)
// when it boots and again whenever a group, a rule or a port changes.

type secgroup struct {
	ID, Name, Description, ProjectID string
	Created, Updated                 time.Time
	Revision                         int
	Rules                            []*sgRule // in creation order, ids stable across reads
}

type sgRule struct {
	ID, GroupID, ProjectID string
	Direction, Ethertype   string // ingress/egress, IPv4/IPv6
	Protocol               string // "": any
	PortMin, PortMax       *int
	RemoteIP, RemoteGroup  string
	Description            string
	Created                time.Time
}

// newSecgroup is a group with Neutron's rules for a new one: all egress,
// and for the project's default group ingress from its own members.
func newSecgroup(name, desc, projectID string) *secgroup {
	now := time.Now()
	sg := &secgroup{ID: newUUID(), Name: name, Description: desc, ProjectID: projectID, Created: now, Updated: now, Revision: 1}
	for _, dir := range []string{"ingress", "egress"} {
		if dir == "ingress" && name != "default" {
			continue
		}
		for _, et := range []string{"IPv4", "IPv6"} {
			r := &sgRule{ID: newUUID(), GroupID: sg.ID, ProjectID: projectID, Direction: dir, Ethertype: et, Created: now}
			if dir == "ingress" {
				r.RemoteGroup = sg.ID
			}
			sg.Rules = append(sg.Rules, r)
		}
	}
	return sg
}

func optInt(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func optStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (nt *neutron) ruleJSON(r *sgRule) obj {
	var cidr any
	if p, err := netip.ParsePrefix(r.RemoteIP); err == nil {
		cidr = p.Masked().String()
	}
	sg := nt.secgroups[r.GroupID]
	return obj{"id": r.ID, "direction": r.Direction, "ethertype": r.Ethertype, "protocol": optStr(r.Protocol),
		"port_range_min": optInt(r.PortMin), "port_range_max": optInt(r.PortMax), "remote_ip_prefix": optStr(r.RemoteIP),
		"remote_group_id": optStr(r.RemoteGroup), "remote_address_group_id": nil, "normalized_cidr": cidr,
		"belongs_to_default_sg": sg != nil && sg.Name == "default", "security_group_id": r.GroupID,
		"tenant_id": r.ProjectID, "project_id": r.ProjectID, "description": r.Description, "tags": []string{},
		"created_at": tsZ(r.Created), "updated_at": tsZ(r.Created), "revision_number": 0}
}

func (nt *neutron) sgJSON(sg *secgroup) obj {
	rules := []obj{}
	for _, r := range sg.Rules {
		rules = append(rules, nt.ruleJSON(r))
	}
	return obj{"id": sg.ID, "name": sg.Name, "description": sg.Description, "tenant_id": sg.ProjectID, "project_id": sg.ProjectID,
		"security_group_rules": rules, "stateful": true, "shared": false, "tags": []string{}, "created_at": tsZ(sg.Created),
		"updated_at": tsZ(sg.Updated), "revision_number": sg.Revision}
}

// secGroupRoutes serves /security-groups and /security-group-rules below p.
func (nt *neutron) secGroupRoutes(rt *router, p string) {
	rt.handle("GET "+p+"/security-groups", nt.locked(nt.listSecGroups))
	rt.handle("POST "+p+"/security-groups", nt.locked(nt.createSecGroup))
	rt.handle("GET "+p+"/security-groups/{id}", nt.locked(nt.oneSecGroup(nt.getSecGroup)))
	rt.handle("PUT "+p+"/security-groups/{id}", nt.locked(nt.oneSecGroup(nt.updateSecGroup)))
	rt.handle("DELETE "+p+"/security-groups/{id}", nt.locked(nt.oneSecGroup(nt.deleteSecGroup)))
	rt.handle("GET "+p+"/security-group-rules", nt.locked(nt.listRules))
	rt.handle("POST "+p+"/security-group-rules", nt.locked(nt.createRule))
	rt.handle("GET "+p+"/security-group-rules/{id}", nt.locked(nt.oneRule(func(w http.ResponseWriter, _ *http.Request, _ *caller, r *sgRule) []func() {
		writeJSON(w, http.StatusOK, obj{"security_group_rule": nt.ruleJSON(r)})
		return nil
	})))
	rt.handle("DELETE "+p+"/security-group-rules/{id}", nt.locked(nt.oneRule(nt.deleteRule)))
	for _, c := range []string{"security-groups", "security-group-rules"} {
		rt.handle(p+"/"+c, func(w http.ResponseWriter, _ *http.Request, _ *caller) { methodNotAllowed(w, SvcNetwork) })
		rt.handle(p+"/"+c+"/{id}", func(w http.ResponseWriter, _ *http.Request, _ *caller) { methodNotAllowed(w, SvcNetwork) })
	}
}

// oneSecGroup looks up the caller's group of the path's id (404 as Neutron).
func (nt *neutron) oneSecGroup(h func(w http.ResponseWriter, r *http.Request, c *caller, sg *secgroup) []func()) netHandler {
	return func(w http.ResponseWriter, r *http.Request, c *caller) []func() {
		id := r.PathValue("id")
		sg := nt.secgroups[id]
		if sg == nil || sg.ProjectID != c.t.project.ID {
			fail(w, SvcNetwork, http.StatusNotFound, "SecurityGroupNotFound", "Security group "+id+" does not exist")
			return nil
		}
		return h(w, r, c, sg)
	}
}

func (nt *neutron) oneRule(h func(w http.ResponseWriter, r *http.Request, c *caller, rule *sgRule) []func()) netHandler {
	return func(w http.ResponseWriter, r *http.Request, c *caller) []func() {
		id := r.PathValue("id")
		for _, sg := range nt.secgroups {
			for _, rule := range sg.Rules {
				if rule.ID == id && sg.ProjectID == c.t.project.ID {
					return h(w, r, c, rule)
				}
			}
		}
		fail(w, SvcNetwork, http.StatusNotFound, "SecurityGroupRuleNotFound", "Security group rule "+id+" does not exist")
		return nil
	}
}

func (nt *neutron) getSecGroup(w http.ResponseWriter, _ *http.Request, _ *caller, sg *secgroup) []func() {
	writeJSON(w, http.StatusOK, obj{"security_group": nt.sgJSON(sg)})
	return nil
}

func (nt *neutron) listSecGroups(w http.ResponseWriter, r *http.Request, c *caller) []func() {
	out := []obj{}
	for _, sg := range sortedGroups(nt.secgroups) {
		if sg.ProjectID == c.t.project.ID && filterOK(r, map[string]string{"id": sg.ID, "name": sg.Name, "project_id": sg.ProjectID, "tenant_id": sg.ProjectID}) {
			out = append(out, nt.sgJSON(sg))
		}
	}
	writeJSON(w, http.StatusOK, obj{"security_groups": out})
	return nil
}

type sgBody struct {
	SecurityGroup struct {
		Name        *string `json:"name"`
		Description *string `json:"description"`
	} `json:"security_group"`
}

func (nt *neutron) createSecGroup(w http.ResponseWriter, r *http.Request, c *caller) []func() {
	var b sgBody
	if err := decodeBody(r, &b); err != nil {
		fail(w, SvcNetwork, http.StatusBadRequest, "", err.Error())
		return nil
	}
	name, desc := "", ""
	if b.SecurityGroup.Name != nil {
		name = *b.SecurityGroup.Name
	}
	if b.SecurityGroup.Description != nil {
		desc = *b.SecurityGroup.Description
	}
	if name == "default" {
		fail(w, SvcNetwork, http.StatusConflict, "SecurityGroupDefaultAlreadyExists", "Default security group already exists.")
		return nil
	}
	sg := newSecgroup(name, desc, c.t.project.ID)
	nt.secgroups[sg.ID] = sg
	writeJSON(w, http.StatusCreated, obj{"security_group": nt.sgJSON(sg)})
	return nil
}

func (nt *neutron) updateSecGroup(w http.ResponseWriter, r *http.Request, _ *caller, sg *secgroup) []func() {
	var b sgBody
	if err := decodeBody(r, &b); err != nil {
		fail(w, SvcNetwork, http.StatusBadRequest, "", err.Error())
		return nil
	}
	if b.SecurityGroup.Name != nil && *b.SecurityGroup.Name != sg.Name && (sg.Name == "default" || *b.SecurityGroup.Name == "default") {
		fail(w, SvcNetwork, http.StatusConflict, "SecurityGroupCannotUpdateDefault", "Updating default security group not allowed.")
		return nil
	}
	if b.SecurityGroup.Name != nil {
		sg.Name = *b.SecurityGroup.Name
	}
	if b.SecurityGroup.Description != nil {
		sg.Description = *b.SecurityGroup.Description
	}
	sg.Updated = time.Now()
	sg.Revision++
	writeJSON(w, http.StatusOK, obj{"security_group": nt.sgJSON(sg)})
	return nil
}

func (nt *neutron) deleteSecGroup(w http.ResponseWriter, _ *http.Request, _ *caller, sg *secgroup) []func() {
	if sg.Name == "default" {
		fail(w, SvcNetwork, http.StatusConflict, "SecurityGroupCannotRemoveDefault", "Insufficient rights for removing default security group.")
		return nil
	}
	for _, p := range nt.ports {
		if contains(p.SecurityGroups, sg.ID) {
			fail(w, SvcNetwork, http.StatusConflict, "SecurityGroupInUse", "Security Group "+sg.ID+" in use.")
			return nil
		}
	}
	delete(nt.secgroups, sg.ID)
	w.WriteHeader(http.StatusNoContent)
	return []func(){nt.c.compute.refreshFirewalls}
}

func (nt *neutron) listRules(w http.ResponseWriter, r *http.Request, c *caller) []func() {
	out := []obj{}
	for _, sg := range sortedGroups(nt.secgroups) {
		for _, rule := range sg.Rules {
			f := map[string]string{"id": rule.ID, "security_group_id": rule.GroupID, "direction": rule.Direction,
				"ethertype": rule.Ethertype, "protocol": rule.Protocol, "remote_group_id": rule.RemoteGroup,
				"remote_ip_prefix": rule.RemoteIP, "project_id": rule.ProjectID, "tenant_id": rule.ProjectID}
			if sg.ProjectID == c.t.project.ID && filterOK(r, f) {
				out = append(out, nt.ruleJSON(rule))
			}
		}
	}
	writeJSON(w, http.StatusOK, obj{"security_group_rules": out})
	return nil
}

func (nt *neutron) deleteRule(w http.ResponseWriter, _ *http.Request, _ *caller, rule *sgRule) []func() {
	sg := nt.secgroups[rule.GroupID]
	var keep []*sgRule
	for _, x := range sg.Rules {
		if x != rule {
			keep = append(keep, x)
		}
	}
	sg.Rules = keep
	sg.Updated = time.Now()
	sg.Revision++
	w.WriteHeader(http.StatusNoContent)
	return []func(){nt.c.compute.refreshFirewalls}
}

type ruleBody struct {
	Rule struct {
		GroupID     string  `json:"security_group_id"`
		Direction   string  `json:"direction"`
		Ethertype   *string `json:"ethertype"`
		Protocol    *string `json:"protocol"`
		PortMin     *int    `json:"port_range_min"`
		PortMax     *int    `json:"port_range_max"`
		RemoteIP    *string `json:"remote_ip_prefix"`
		RemoteGroup *string `json:"remote_group_id"`
		Description *string `json:"description"`
	} `json:"security_group_rule"`
}

func (nt *neutron) createRule(w http.ResponseWriter, r *http.Request, c *caller) []func() {
	var b ruleBody
	if err := decodeBody(r, &b); err != nil {
		fail(w, SvcNetwork, http.StatusBadRequest, "", err.Error())
		return nil
	}
	rule, e := nt.newRule(b, c.t.project.ID)
	if e != nil {
		e.write(w)
		return nil
	}
	sg := nt.secgroups[rule.GroupID]
	for _, x := range sg.Rules {
		if sameRule(x, rule) {
			fail(w, SvcNetwork, http.StatusConflict, "SecurityGroupRuleExists", "Security group rule already exists. Rule id is "+x.ID+".")
			return nil
		}
	}
	sg.Rules = append(sg.Rules, rule)
	sg.Updated = time.Now()
	sg.Revision++
	writeJSON(w, http.StatusCreated, obj{"security_group_rule": nt.ruleJSON(rule)})
	return []func(){nt.c.compute.refreshFirewalls}
}

func sameRule(a, b *sgRule) bool {
	eq := func(x, y *int) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.Direction == b.Direction && a.Ethertype == b.Ethertype && a.Protocol == b.Protocol && eq(a.PortMin, b.PortMin) &&
		eq(a.PortMax, b.PortMax) && a.RemoteIP == b.RemoteIP && a.RemoteGroup == b.RemoteGroup
}

// newRule checks a rule as Neutron does: the group, direction,
// ethertype, protocol, port range and the one remote.
func (nt *neutron) newRule(b ruleBody, projectID string) (*sgRule, *netErr) {
	in := b.Rule
	bad := func(msg string) (*sgRule, *netErr) { return nil, &netErr{http.StatusBadRequest, "", msg} }
	sg := nt.secgroups[in.GroupID]
	if sg == nil || sg.ProjectID != projectID {
		return nil, &netErr{http.StatusNotFound, "SecurityGroupNotFound", "Security group " + in.GroupID + " does not exist"}
	}
	rule := &sgRule{ID: newUUID(), GroupID: sg.ID, ProjectID: projectID, Direction: in.Direction, Ethertype: "IPv4",
		PortMin: in.PortMin, PortMax: in.PortMax, Created: time.Now()}
	if in.Direction != "ingress" && in.Direction != "egress" {
		return bad("Invalid input for direction. Reason: '" + in.Direction + "' is not in ['ingress', 'egress'].")
	}
	if in.Ethertype != nil {
		rule.Ethertype = *in.Ethertype
	}
	if rule.Ethertype != "IPv4" && rule.Ethertype != "IPv6" {
		return bad("Invalid input for ethertype. Reason: '" + rule.Ethertype + "' is not in ['IPv4', 'IPv6'].")
	}
	if in.Protocol != nil {
		rule.Protocol = strings.ToLower(*in.Protocol)
	}
	if e := checkProtocolPorts(rule); e != nil {
		return nil, e
	}
	if in.Description != nil {
		rule.Description = *in.Description
	}
	if in.RemoteIP != nil && in.RemoteGroup != nil && *in.RemoteIP != "" && *in.RemoteGroup != "" {
		return bad("Only remote_ip_prefix or remote_group_id may be provided.")
	}
	if in.RemoteIP != nil && *in.RemoteIP != "" {
		p, err := netip.ParsePrefix(*in.RemoteIP)
		if err != nil {
			return bad("Invalid input for remote_ip_prefix. Reason: '" + *in.RemoteIP + "' is not a valid IP subnet.")
		}
		if p.Addr().Is4() != (rule.Ethertype == "IPv4") {
			return bad("Conflicting value ethertype " + rule.Ethertype + " for CIDR " + *in.RemoteIP)
		}
		rule.RemoteIP = *in.RemoteIP
	}
	if in.RemoteGroup != nil && *in.RemoteGroup != "" {
		if g := nt.secgroups[*in.RemoteGroup]; g == nil || g.ProjectID != projectID {
			return nil, &netErr{http.StatusNotFound, "SecurityGroupNotFound", "Security group " + *in.RemoteGroup + " does not exist"}
		}
		rule.RemoteGroup = *in.RemoteGroup
	}
	return rule, nil
}

// protocolNumbers are the names Neutron takes for a rule's protocol.
var protocolNumbers = map[string]int{"icmp": 1, "tcp": 6, "udp": 17, "icmpv6": 58, "sctp": 132, "gre": 47}

// checkProtocolPorts is Neutron's check of a rule's protocol and ports.
func checkProtocolPorts(r *sgRule) *netErr {
	bad := func(typ, msg string) *netErr { return &netErr{http.StatusBadRequest, typ, msg} }
	num, named := protocolNumbers[r.Protocol]
	if !named && r.Protocol != "" && r.Protocol != "any" {
		n, err := strconv.Atoi(r.Protocol)
		if err != nil || n < 0 || n > 255 {
			return bad("SecurityGroupRuleInvalidProtocol", "Security group rule protocol "+r.Protocol+" not supported. Only protocol values [None, "+
				"'tcp', 'udp', 'icmp', 'icmpv6', 'sctp', 'gre'] and integer representations [0 to 255] are supported.")
		}
		num = n
	}
	if r.PortMin == nil && r.PortMax == nil {
		return nil
	}
	if r.Protocol == "" || r.Protocol == "any" {
		return bad("SecurityGroupProtocolRequiredWithPorts", "Must also specify protocol if port range is given.")
	}
	switch num {
	case 6, 17, 132:
		if r.PortMin == nil || r.PortMax == nil || *r.PortMin > *r.PortMax {
			return bad("SecurityGroupInvalidPortRange", "For TCP/UDP protocols, port_range_min must be <= port_range_max")
		}
		for _, p := range []int{*r.PortMin, *r.PortMax} {
			if p < 1 || p > 65535 {
				return bad("SecurityGroupInvalidPortValue", "Invalid value for port "+strconv.Itoa(p))
			}
		}
	case 1, 58:
		for _, p := range []*int{r.PortMin, r.PortMax} {
			if p != nil && (*p < 0 || *p > 255) {
				return bad("SecurityGroupInvalidIcmpValue", "Invalid value for ICMP type or code: "+strconv.Itoa(*p))
			}
		}
	}
	return nil
}

// groupIDs resolves a server's security group names (or ids) in its
// project, as Nova does before it makes the server's ports; nt.mu held.
func (nt *neutron) groupIDs(projectID string, names []string) ([]string, *httpErr) {
	var ids []string
	for _, n := range names {
		var hits []string
		for _, sg := range sortedGroups(nt.secgroups) {
			if sg.ProjectID == projectID && (sg.ID == n || sg.Name == n) {
				hits = append(hits, sg.ID)
			}
		}
		switch {
		case len(hits) == 0:
			return nil, &httpErr{http.StatusBadRequest, "Security group " + n + " not found."}
		case len(hits) > 1:
			return nil, &httpErr{http.StatusConflict, "Multiple security groups found matching '" + n + "'. Use an ID to be more specific."}
		}
		if !contains(ids, hits[0]) {
			ids = append(ids, hits[0])
		}
	}
	return ids, nil
}

// setPortsGroup adds the group called ref (a name or an id) to the
// ports, or takes it off them, as Nova does for a server's action. An
// error's "<instance>" is the server's id for the caller to fill in.
func (nt *neutron) setPortsGroup(projectID string, portIDs []string, ref string, add bool) *httpErr {
	nt.mu.Lock()
	defer nt.mu.Unlock()
	ids, e := nt.groupIDs(projectID, []string{ref})
	if e != nil {
		if e.status == http.StatusBadRequest {
			e.status = http.StatusNotFound
		}
		return e
	}
	id := ids[0]
	in := false
	for _, pid := range portIDs {
		if p := nt.ports[pid]; p != nil && contains(p.SecurityGroups, id) {
			in = true
		}
	}
	if !add && !in {
		return &httpErr{http.StatusBadRequest, "Security group " + ref + " not associated with the instance <instance>"}
	}
	for _, pid := range portIDs {
		p := nt.ports[pid]
		if p == nil {
			continue
		}
		if add && !contains(p.SecurityGroups, id) {
			p.SecurityGroups = append(p.SecurityGroups, id)
		} else if !add {
			p.SecurityGroups = removeStr(p.SecurityGroups, id)
		}
		p.Updated = time.Now()
		p.Revision++
	}
	return nil
}

// groupNames are the names of the ports' groups, each once, in order.
func (nt *neutron) groupNames(portIDs []string) []string {
	nt.mu.Lock()
	defer nt.mu.Unlock()
	var names []string
	for _, pid := range portIDs {
		if p := nt.ports[pid]; p != nil {
			for _, id := range p.SecurityGroups {
				if sg := nt.secgroups[id]; sg != nil && !contains(names, sg.Name) {
					names = append(names, sg.Name)
				}
			}
		}
	}
	return names
}

// firewallFor is the filter of the machine's port (the first of
// portIDs): its groups' IPv4 rules, a remote group as its members' fixed
// addresses. A port without groups lets nothing in or out.
func (nt *neutron) firewallFor(portIDs []string) *Firewall {
	nt.mu.Lock()
	defer nt.mu.Unlock()
	fw := &Firewall{}
	if len(portIDs) == 0 || nt.ports[portIDs[0]] == nil {
		return fw
	}
	for _, gid := range nt.ports[portIDs[0]].SecurityGroups {
		sg := nt.secgroups[gid]
		if sg == nil {
			continue
		}
		for _, r := range sg.Rules {
			if r.Ethertype != "IPv4" {
				continue
			}
			for _, remote := range nt.remotesOf(r) {
				fr := FirewallRule{Protocol: r.Protocol, Remote: remote}
				if r.PortMin != nil {
					fr.PortMin = *r.PortMin
				}
				if r.PortMax != nil {
					fr.PortMax = *r.PortMax
				}
				if r.Direction == "ingress" {
					fw.Ingress = append(fw.Ingress, fr)
				} else {
					fw.Egress = append(fw.Egress, fr)
				}
			}
		}
	}
	return fw
}

// remotesOf is the rule's peers: any (""), its prefix, or the fixed
// addresses of its remote group's ports; nt.mu held.
func (nt *neutron) remotesOf(r *sgRule) []string {
	if r.RemoteGroup == "" {
		if r.RemoteIP == "" {
			return []string{""}
		}
		return []string{r.RemoteIP}
	}
	var out []string
	for _, p := range sortedPorts(nt.ports) {
		if contains(p.SecurityGroups, r.RemoteGroup) {
			for _, f := range p.FixedIPs {
				out = append(out, f.IP+"/32")
			}
		}
	}
	return out
}

// AllowInDefaultGroup adds an IPv4 ingress rule to project's default
// group, as a site's admin opens SSH in it: protocol, ports (0: any)
// and the remote CIDR.
func (c *Cloud) AllowInDefaultGroup(project, protocol string, portMin, portMax int, remote string) error {
	nt := c.network
	pid := c.ProjectID(project)
	nt.mu.Lock()
	var b ruleBody
	for _, sg := range nt.secgroups {
		if sg.ProjectID == pid && sg.Name == "default" {
			b.Rule.GroupID = sg.ID
		}
	}
	b.Rule.Direction, b.Rule.Protocol, b.Rule.RemoteIP = "ingress", &protocol, &remote
	if portMin > 0 {
		b.Rule.PortMin, b.Rule.PortMax = &portMin, &portMax
	}
	rule, e := nt.newRule(b, pid)
	if e == nil {
		nt.secgroups[rule.GroupID].Rules = append(nt.secgroups[rule.GroupID].Rules, rule)
	}
	nt.mu.Unlock()
	if e != nil {
		return fmt.Errorf("cloud: %s's default group: %s", project, e.msg)
	}
	c.compute.refreshFirewalls()
	return nil
}

// groupStatus lists the groups beyond the projects' default ones.
func (nt *neutron) groupStatus() []StatusItem {
	nt.mu.Lock()
	defer nt.mu.Unlock()
	out := []StatusItem{}
	for _, sg := range sortedGroups(nt.secgroups) {
		if sg.Name != "default" {
			out = append(out, StatusItem{sg.ID, sg.Name, ""})
		}
	}
	return out
}
