package cloud

import (
	"net/http"
	"strings"
	"time"
)

// routes is Neutron v2.0 below authentication (a ".json" suffix already
// stripped). Its collections answer 405 for a method they do not take.
func (nt *neutron) routes() *router {
	rt := newRouter()
	const p = "/networking/v2.0"
	notAllowed := func(w http.ResponseWriter, _ *http.Request, _ *caller) []func() {
		methodNotAllowed(w, SvcNetwork)
		return nil
	}
	rt.handle(p+"/extensions", nt.extensions)
	rt.handle(p+"/extensions/{rest...}", nt.extensions)
	rt.handle("GET "+p+"/networks", nt.locked(nt.listNetworks))
	rt.handle("GET "+p+"/networks/{id}", nt.locked(nt.getNetwork))
	rt.handle("GET "+p+"/networks/{id}/{rest...}", nt.locked(nt.listNetworks))
	rt.handle(p+"/networks", nt.locked(notAllowed))
	rt.handle(p+"/networks/{rest...}", nt.locked(notAllowed))
	rt.handle("GET "+p+"/subnets", nt.locked(nt.listSubnets))
	rt.handle("GET "+p+"/subnets/{id}", nt.locked(nt.getSubnet))
	rt.handle("GET "+p+"/subnets/{id}/{rest...}", nt.locked(nt.listSubnets))
	rt.handle(p+"/subnets", nt.locked(notAllowed))
	rt.handle(p+"/subnets/{rest...}", nt.locked(notAllowed))
	nt.portRoutes(rt, p+"/ports", notAllowed)
	nt.fipRoutes(rt, p+"/floatingips", notAllowed)
	quotas := func(w http.ResponseWriter, r *http.Request, c *caller) {
		nt.serveQuotas(w, r, splitPath(r.PathValue("rest")), c.t)
	}
	rt.handle(p+"/quotas", quotas)
	rt.handle(p+"/quotas/{rest...}", quotas)
	nt.secGroupRoutes(rt, p)
	for _, kind := range []string{"routers", "trunks", "qos", "network-ip-availabilities", "agents", "availability_zones", "subnetpools"} {
		rt.handle("GET "+p+"/"+kind, func(w http.ResponseWriter, _ *http.Request, _ *caller) {
			writeJSON(w, http.StatusOK, obj{strings.ReplaceAll(kind, "-", "_"): []obj{}})
		})
	}
	rt.handle("/", func(w http.ResponseWriter, r *http.Request, _ *caller) { notFoundPath(w, r, SvcNetwork) })
	return rt
}

// locked runs h with nt.mu held, then what h returns without it.
func (nt *neutron) locked(h netHandler) routeFunc {
	return func(w http.ResponseWriter, r *http.Request, c *caller) {
		var after []func()
		nt.mu.Lock()
		defer func() { nt.mu.Unlock(); runAll(after) }()
		after = h(w, r, c)
	}
}

func (nt *neutron) extensions(w http.ResponseWriter, _ *http.Request, _ *caller) {
	exts := []obj{}
	for _, a := range []string{"external-net", "router", "security-group", "port-security", "binding", "standard-attr-description",
		"standard-attr-revisions", "standard-attr-timestamp", "standard-attr-tag", "extra_dhcp_opt", "allowed-address-pairs",
		"revision-if-match", "quotas", "agent", "availability_zone", "network_availability_zone", "dns-integration", "subnet_allocation"} {
		exts = append(exts, obj{"alias": a, "name": a, "description": a, "updated": "2013-01-20T00:00:00-00:00", "links": []obj{}})
	}
	writeJSON(w, http.StatusOK, obj{"extensions": exts})
}

func (nt *neutron) getNetwork(w http.ResponseWriter, r *http.Request, c *caller) []func() {
	id := r.PathValue("id")
	n := nt.networks[id]
	if n == nil {
		fail(w, SvcNetwork, http.StatusNotFound, "NetworkNotFound", "Network "+id+" could not be found.")
		return nil
	}
	writeJSON(w, http.StatusOK, obj{"network": nt.networkJSON(n, c.t)})
	return nil
}

func (nt *neutron) listNetworks(w http.ResponseWriter, r *http.Request, c *caller) []func() {
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
			out = append(out, nt.networkJSON(n, c.t))
		}
	}
	writeJSON(w, http.StatusOK, obj{"networks": out})
	return nil
}

func (nt *neutron) getSubnet(w http.ResponseWriter, r *http.Request, c *caller) []func() {
	id := r.PathValue("id")
	s := nt.subnets[id]
	if s == nil {
		fail(w, SvcNetwork, http.StatusNotFound, "SubnetNotFound", "Subnet "+id+" could not be found.")
		return nil
	}
	writeJSON(w, http.StatusOK, obj{"subnet": nt.subnetJSON(s, c.t)})
	return nil
}

func (nt *neutron) listSubnets(w http.ResponseWriter, r *http.Request, c *caller) []func() {
	out := []obj{}
	for _, n := range []*network{nt.labNet, nt.publicNet} {
		s := nt.subnets[n.SubnetIDs[0]]
		if filterOK(r, map[string]string{"id": s.ID, "name": s.Name, "network_id": s.NetworkID, "cidr": s.CIDR.String(), "ip_version": "4"}) {
			out = append(out, nt.subnetJSON(s, c.t))
		}
	}
	writeJSON(w, http.StatusOK, obj{"subnets": out})
	return nil
}

// netErr is a Neutron error: status, exception type and message.
type netErr struct {
	status   int
	typ, msg string
}

func (e *netErr) write(w http.ResponseWriter) { fail(w, SvcNetwork, e.status, e.typ, e.msg) }

// portBody is the body of POST and PUT /ports.
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

// apply sets the attributes a port create or update may change.
func (b *portBody) apply(p *port) {
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
}

// collection is a Neutron resource collection: its lookup (with its 404)
// and its handlers, each run with nt.mu held.
type collection[T any] struct {
	items                func() map[string]*T
	typ, what, end       string // the 404: typ, what+" "+id+" could not be found"+end
	list, create         netHandler
	get, update, destroy func(w http.ResponseWriter, r *http.Request, c *caller, x *T) []func()
}

// collectionRoutes serves a collection below p: 405 for a method it does
// not take, the item looked up before anything else, 404 below an item.
func collectionRoutes[T any](nt *neutron, rt *router, p string, notAllowed netHandler, col collection[T]) {
	one := func(h func(w http.ResponseWriter, r *http.Request, c *caller, x *T) []func()) routeFunc {
		return nt.locked(oneIn(col.items, col.typ, col.what, col.end, h))
	}
	rt.handle("GET "+p, nt.locked(col.list))
	rt.handle("POST "+p, nt.locked(col.create))
	rt.handle(p, nt.locked(notAllowed))
	rt.handle("GET "+p+"/{id}", one(col.get))
	rt.handle("PUT "+p+"/{id}", one(col.update))
	rt.handle("DELETE "+p+"/{id}", one(col.destroy))
	rt.handle(p+"/{id}", one(func(w http.ResponseWriter, r *http.Request, c *caller, _ *T) []func() { return notAllowed(w, r, c) }))
	rt.handle(p+"/{id}/{rest...}", func(w http.ResponseWriter, r *http.Request, _ *caller) {
		fail(w, SvcNetwork, http.StatusNotFound, col.typ, col.what+" "+r.PathValue("id")+" could not be found"+col.end)
	})
}

// portRoutes serves /ports below p.
func (nt *neutron) portRoutes(rt *router, p string, notAllowed netHandler) {
	collectionRoutes(nt, rt, p, notAllowed, collection[port]{
		items: func() map[string]*port { return nt.ports }, typ: "PortNotFound", what: "Port", end: ".",
		list: nt.listPorts, create: nt.createPortAPI, update: nt.updatePort,
		get: func(w http.ResponseWriter, _ *http.Request, _ *caller, pt *port) []func() {
			writeJSON(w, http.StatusOK, obj{"port": nt.portJSON(pt)})
			return nil
		},
		destroy: func(w http.ResponseWriter, _ *http.Request, _ *caller, pt *port) []func() {
			var after []func()
			if pt.DeviceID != "" {
				// Neutron allows this (Nova notices); keep the server consistent.
				dev, pid := pt.DeviceID, pt.ID
				after = append(after, func() { nt.c.compute.portDeleted(dev, pid) })
			}
			after = append(after, nt.deletePort(pt)...)
			w.WriteHeader(http.StatusNoContent)
			return append(after, nt.c.compute.refreshFirewalls)
		},
	})
}

// oneIn looks up the path's id among items (nt.mu held); an unknown id
// answers 404 with the Neutron exception typ and what+" "+id+" could not
// be found"+end.
func oneIn[T any](items func() map[string]*T, typ, what, end string, h func(w http.ResponseWriter, r *http.Request, c *caller, x *T) []func()) netHandler {
	return func(w http.ResponseWriter, r *http.Request, c *caller) []func() {
		id := r.PathValue("id")
		x := items()[id]
		if x == nil {
			fail(w, SvcNetwork, http.StatusNotFound, typ, what+" "+id+" could not be found"+end)
			return nil
		}
		return h(w, r, c, x)
	}
}

func (nt *neutron) listPorts(w http.ResponseWriter, r *http.Request, c *caller) []func() {
	out := []obj{}
	for _, p := range sortedPorts(nt.ports) {
		f := map[string]string{"id": p.ID, "name": p.Name, "network_id": p.NetworkID, "device_id": p.DeviceID,
			"device_owner": p.DeviceOwner, "mac_address": p.MAC, "status": p.status(), "project_id": p.ProjectID, "tenant_id": p.ProjectID}
		if p.ProjectID == c.t.project.ID && filterOK(r, f) {
			out = append(out, nt.portJSON(p))
		}
	}
	writeJSON(w, http.StatusOK, obj{"ports": out})
	return nil
}

func (nt *neutron) createPortAPI(w http.ResponseWriter, r *http.Request, c *caller) []func() {
	var b portBody
	if err := decodeBody(r, &b); err != nil {
		fail(w, SvcNetwork, http.StatusBadRequest, "", err.Error())
		return nil
	}
	n := nt.networks[b.Port.NetworkID]
	if n == nil {
		fail(w, SvcNetwork, http.StatusNotFound, "NetworkNotFound", "Network "+b.Port.NetworkID+" could not be found.")
		return nil
	}
	var fixed []fixedIP
	for _, f := range b.Port.FixedIPs {
		fixed = append(fixed, fixedIP{SubnetID: f.SubnetID, IP: f.IPAddress})
	}
	name := ""
	if b.Port.Name != nil {
		name = *b.Port.Name
	}
	if e := nt.checkPortGroups(&b, c.t.project.ID); e != nil {
		e.write(w)
		return nil
	}
	p, err := nt.createPort(n, name, c.t.project.ID, fixed, nil)
	if err != nil {
		fail(w, SvcNetwork, http.StatusConflict, "IpAddressAlreadyAllocated", err.Error())
		return nil
	}
	b.apply(p)
	writeJSON(w, http.StatusCreated, obj{"port": nt.portJSON(p)})
	return []func(){nt.c.compute.refreshFirewalls}
}

// checkPortGroups wants every group a port body names to be the
// project's; nt.mu held.
func (nt *neutron) checkPortGroups(b *portBody, projectID string) *netErr {
	if b.Port.SecurityGroups == nil {
		return nil
	}
	for _, id := range *b.Port.SecurityGroups {
		if sg := nt.secgroups[id]; sg == nil || sg.ProjectID != projectID {
			return &netErr{http.StatusNotFound, "SecurityGroupNotFound", "Security group " + id + " does not exist"}
		}
	}
	return nil
}

func (nt *neutron) updatePort(w http.ResponseWriter, r *http.Request, c *caller, p *port) []func() {
	var b portBody
	if err := decodeBody(r, &b); err != nil {
		fail(w, SvcNetwork, http.StatusBadRequest, "", err.Error())
		return nil
	}
	if e := nt.checkPortGroups(&b, c.t.project.ID); e != nil {
		e.write(w)
		return nil
	}
	if b.Port.Name != nil {
		p.Name = *b.Port.Name
	}
	b.apply(p)
	p.Updated = time.Now()
	p.Revision++
	writeJSON(w, http.StatusOK, obj{"port": nt.portJSON(p)})
	return []func(){nt.c.compute.refreshFirewalls}
}
