package cloud

import (
	"fmt"
	"net/http"
	"time"
)

// computePrefix is Nova's API root; the legacy /v2.1/{project_id}/ form
// is routed without the project.
const computePrefix = "/compute/v2.1"

// routes is Nova below authentication. The double answers 405 for a
// method Nova's router does not take on a collection, 404 below an
// unknown server, keypair or flavor, and 404 for paths it does not model.
func (nv *nova) routes() *router {
	rt := newRouter()
	const p = computePrefix
	notAllowed := func(w http.ResponseWriter, _ *http.Request, _ *caller) { methodNotAllowed(w, SvcCompute) }
	notFound := func(w http.ResponseWriter, r *http.Request, _ *caller) { notFoundPath(w, r, SvcCompute) }

	rt.handle("GET "+p+"/flavors", nv.listFlavors)
	rt.handle("GET "+p+"/flavors/detail", nv.listFlavors)
	rt.handle("GET "+p+"/flavors/{id}", nv.oneFlavor(obj{}))
	rt.handle("GET "+p+"/flavors/{id}/os-extra_specs", nv.oneFlavor(obj{"extra_specs": obj{}}))
	rt.handle("GET "+p+"/flavors/{id}/os-flavor-access", nv.oneFlavor(obj{"flavor_access": []obj{}}))
	rt.handle("GET "+p+"/flavors/{id}/{rest...}", nv.oneFlavor(obj{}))
	rt.handle(p+"/flavors", notAllowed)
	rt.handle(p+"/flavors/{rest...}", notAllowed)

	rt.handle("GET "+p+"/os-keypairs", nv.listKeypairs)
	rt.handle("POST "+p+"/os-keypairs", nv.createKeypair)
	rt.handle(p+"/os-keypairs", notAllowed)
	rt.handle("GET "+p+"/os-keypairs/{name}", nv.oneKeypair(nv.getKeypair))
	rt.handle("DELETE "+p+"/os-keypairs/{name}", nv.oneKeypair(nv.deleteKeypair))
	rt.handle(p+"/os-keypairs/{name}", nv.oneKeypair(func(w http.ResponseWriter, _ *http.Request, _ *caller, _ *keypair) {
		methodNotAllowed(w, SvcCompute)
	}))
	rt.handle(p+"/os-keypairs/{name}/{rest...}", nv.noKeypair)

	nv.serverRoutes(rt, p+"/servers")

	zones := func(w http.ResponseWriter, _ *http.Request, _ *caller) {
		writeJSON(w, http.StatusOK, obj{"availabilityZoneInfo": []obj{{"zoneName": "nova", "zoneState": obj{"available": true}, "hosts": nil}}})
	}
	rt.handle(p+"/os-availability-zone", zones)
	rt.handle(p+"/os-availability-zone/{rest...}", zones)
	quotas := func(w http.ResponseWriter, r *http.Request, c *caller) {
		nv.serveQuotaSets(w, r, splitPath(r.PathValue("rest")), c.t, c.mv)
	}
	rt.handle(p+"/os-quota-sets", quotas)
	rt.handle(p+"/os-quota-sets/{rest...}", quotas)
	rt.handle(p+"/limits", nv.limits)
	rt.handle(p+"/limits/{rest...}", nv.limits)
	rt.handle("/", notFound)
	return rt
}

// serverRoutes serves /servers below p.
func (nv *nova) serverRoutes(rt *router, p string) {
	notFound := func(w http.ResponseWriter, r *http.Request, _ *caller, _ *server) []func() {
		notFoundPath(w, r, SvcCompute)
		return nil
	}
	rt.handle("POST "+p, func(w http.ResponseWriter, r *http.Request, c *caller) { nv.createServer(w, r, c.t, c.mv) })
	rt.handle("GET "+p, func(w http.ResponseWriter, r *http.Request, c *caller) { nv.listServers(w, r, c.t, c.mv, false) })
	rt.handle("GET "+p+"/detail", func(w http.ResponseWriter, r *http.Request, c *caller) { nv.listServers(w, r, c.t, c.mv, true) })
	rt.handle(p, func(w http.ResponseWriter, _ *http.Request, _ *caller) { methodNotAllowed(w, SvcCompute) })
	// Other methods on /servers/detail: see oneServer.
	rt.handle("GET "+p+"/{id}", nv.oneServer(true, func(w http.ResponseWriter, _ *http.Request, c *caller, s *server) []func() {
		writeJSON(w, http.StatusOK, obj{"server": nv.serverJSON(s, c.mv)})
		return nil
	}))
	rt.handle("DELETE "+p+"/{id}", nv.oneServer(true, func(w http.ResponseWriter, _ *http.Request, _ *caller, s *server) []func() {
		if !s.deleted {
			nv.deleteServer(s)
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}))
	rt.handle("PUT "+p+"/{id}", nv.oneServer(false, nv.renameServer))
	rt.handle("POST "+p+"/{id}/action", nv.oneServer(false, func(w http.ResponseWriter, r *http.Request, c *caller, s *server) []func() {
		return nv.serverAction(w, r, s, c.t, c.mv)
	}))
	rt.handle("GET "+p+"/{id}/metadata", nv.oneServer(false, func(w http.ResponseWriter, _ *http.Request, _ *caller, s *server) []func() {
		writeJSON(w, http.StatusOK, obj{"metadata": s.Meta})
		return nil
	}))
	rt.handle("GET "+p+"/{id}/os-interface", nv.oneServer(false, func(w http.ResponseWriter, _ *http.Request, _ *caller, s *server) []func() {
		writeJSON(w, http.StatusOK, obj{"interfaceAttachments": nv.c.network.interfaceAttachments(s.Ports)})
		return nil
	}))
	rt.handle("GET "+p+"/{id}/os-volume_attachments", nv.oneServer(false, func(w http.ResponseWriter, _ *http.Request, _ *caller, s *server) []func() {
		out := []obj{}
		for i, v := range s.Volumes {
			out = append(out, obj{"id": v.ID, "volumeId": v.ID, "serverId": s.ID, "device": fmt.Sprintf("/dev/vd%c", 'a'+i)})
		}
		writeJSON(w, http.StatusOK, obj{"volumeAttachments": out})
		return nil
	}))
	rt.handle(p+"/{id}/os-server-password", nv.oneServer(false, func(w http.ResponseWriter, r *http.Request, _ *caller, s *server) []func() {
		nv.serverPassword(w, r, s)
		return nil
	}))
	rt.handle("GET "+p+"/{id}/os-instance-actions", nv.oneServer(false, func(w http.ResponseWriter, _ *http.Request, _ *caller, _ *server) []func() {
		writeJSON(w, http.StatusOK, obj{"instanceActions": []obj{}})
		return nil
	}))
	rt.handle("GET "+p+"/{id}/os-security-groups", nv.oneServer(false, func(w http.ResponseWriter, _ *http.Request, _ *caller, s *server) []func() {
		writeJSON(w, http.StatusOK, obj{"security_groups": nv.c.network.novaSecurityGroups(s.ProjectID)})
		return nil
	}))
	rt.handle(p+"/{id}", nv.oneServer(false, notFound))
	rt.handle(p+"/{id}/{rest...}", nv.oneServer(false, notFound))
}

// serverFunc serves one server with nv.mu held; what it returns runs
// after nv.mu is released.
type serverFunc func(w http.ResponseWriter, r *http.Request, c *caller, s *server) []func()

// oneServer looks up the path's server in the caller's project. A server
// being deleted answers only GET and DELETE of itself, as in Nova.
func (nv *nova) oneServer(whileDeleting bool, h serverFunc) routeFunc {
	return func(w http.ResponseWriter, r *http.Request, c *caller) {
		id := r.PathValue("id")
		if id == "detail" && r.URL.Path == computePrefix+"/servers/detail" {
			// /servers/detail is a collection: no server is named so.
			methodNotAllowed(w, SvcCompute)
			return
		}
		var after []func()
		nv.mu.Lock()
		defer func() { nv.mu.Unlock(); runAll(after) }()
		s := nv.servers[id]
		if s == nil || s.ProjectID != c.t.project.ID {
			fail(w, SvcCompute, http.StatusNotFound, "", "Instance "+id+" could not be found.")
			return
		}
		if s.deleted && !whileDeleting {
			// being deleted: Nova still shows it (task_state deleting) until gone
			fail(w, SvcCompute, http.StatusConflict, "", "Cannot act on instance "+s.ID+" while it is in task_state deleting")
			return
		}
		after = h(w, r, c, s)
	}
}

func (nv *nova) renameServer(w http.ResponseWriter, r *http.Request, c *caller, s *server) []func() {
	var b struct {
		Server struct {
			Name *string `json:"name"`
		} `json:"server"`
	}
	if err := decodeBody(r, &b); err != nil {
		fail(w, SvcCompute, http.StatusBadRequest, "", err.Error())
		return nil
	}
	if b.Server.Name != nil {
		s.Name = *b.Server.Name
	}
	s.Updated = time.Now()
	writeJSON(w, http.StatusOK, obj{"server": nv.serverJSON(s, c.mv)})
	return nil
}

func (nv *nova) limits(w http.ResponseWriter, _ *http.Request, c *caller) {
	nv.mu.Lock()
	u, q := nv.usage(c.t.project.ID), nv.quotas.of(c.t.project.ID)
	nv.mu.Unlock()
	writeJSON(w, http.StatusOK, obj{"limits": obj{"rate": []obj{}, "absolute": obj{
		"maxTotalInstances": q["instances"], "maxTotalCores": q["cores"], "maxTotalRAMSize": q["ram"], "maxServerMeta": q["metadata_items"],
		"maxImageMeta": 128, "maxPersonality": q["injected_files"], "maxPersonalitySize": q["injected_file_content_bytes"], "maxTotalKeypairs": q["key_pairs"],
		"maxServerGroups": q["server_groups"], "maxServerGroupMembers": q["server_group_members"], "maxSecurityGroups": 10, "maxSecurityGroupRules": 20,
		"maxTotalFloatingIps": 10, "totalInstancesUsed": u["instances"], "totalCoresUsed": u["cores"], "totalRAMUsed": u["ram"],
		"totalFloatingIpsUsed": 0, "totalSecurityGroupsUsed": 0, "totalServerGroupsUsed": 0}}})
}

func (nv *nova) listFlavors(w http.ResponseWriter, r *http.Request, c *caller) {
	nv.mu.Lock()
	defer nv.mu.Unlock()
	detail := r.URL.Path == computePrefix+"/flavors/detail"
	out := []obj{}
	minDisk, minRAM := queryInt(r, "minDisk", 0), queryInt(r, "minRam", 0)
	for _, f := range nv.flavors {
		if f.Disk >= minDisk && f.RAM >= minRAM {
			out = append(out, nv.flavorJSON(f, detail, c.mv))
		}
	}
	writeJSON(w, http.StatusOK, obj{"flavors": out})
}

// oneFlavor answers with body, or with the flavor when body is empty.
func (nv *nova) oneFlavor(body obj) routeFunc {
	return func(w http.ResponseWriter, r *http.Request, c *caller) {
		nv.mu.Lock()
		defer nv.mu.Unlock()
		id := r.PathValue("id")
		f := nv.flavor(id)
		if f == nil {
			fail(w, SvcCompute, http.StatusNotFound, "", "Flavor "+id+" could not be found.")
			return
		}
		out := body
		if len(out) == 0 {
			out = obj{"flavor": nv.flavorJSON(f, true, c.mv)}
		}
		writeJSON(w, http.StatusOK, out)
	}
}
