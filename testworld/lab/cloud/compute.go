package cloud

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// nova is the compute service. It is first in the lock order: it calls
// into volume, image and network with its lock held, and they never call
// back into it while holding theirs.
type nova struct {
	c  *Cloud
	rt *router // the v2.1 API below authentication

	fwMu sync.Mutex // one refreshFirewalls at a time

	mu        sync.Mutex
	flavors   []*Flavor
	servers   map[string]*server
	keypairs  map[string]*keypair // by user id + "/" + name
	passwords map[string]string   // server id -> encrypted admin password
	quotas    quotas
}

func newNova(c *Cloud) *nova {
	nv := &nova{c: c, servers: map[string]*server{}, keypairs: map[string]*keypair{}, quotas: newQuotas(novaQuotaDefaults)}
	nv.rt = nv.routes()
	return nv
}

const maxNovaMicroversion = 79 // 2.79

// Nova power_state values.
const (
	novaPowerNoState  = 0
	novaPowerRunning  = 1
	novaPowerShutdown = 4
	novaPowerCrashed  = 6
)

type attachedVol struct {
	ID                  string
	DeleteOnTermination bool
}

type server struct {
	ID, Name, Status, TaskState, VMState string
	Power                                int
	ImageID, FlavorID                    string
	Meta                                 map[string]string
	KeyName                              string
	UserData                             []byte
	AZ                                   string
	ConfigDrive                          bool
	Created, Updated, Launched           time.Time
	Fault                                obj
	Ports                                []string
	ownPorts                             map[string]bool
	Volumes                              []attachedVol
	Disk                                 string // own root disk (image-backed)
	machine                              Machine
	deleted                              bool
	SecurityGroups                       []string
	UserID, ProjectID                    string
	sshDelay                             time.Duration
	fault                                *Fault // injected ERROR/stuck
	stuck                                bool
	bootVol                              string // boot volume id when volume-backed
	bootVolNew                           bool   // the boot volume was made for this server
	bootImage                            string // the image that volume is made from
	bootSnapshot                         string // or the Cinder snapshot it is made from
	listable                             time.Time
}

type keypair struct {
	Name, PublicKey, Fingerprint, Type, UserID string
	Created                                    time.Time
}

type microversion struct{ major, minor int }

func (m microversion) String() string { return fmt.Sprintf("%d.%d", m.major, m.minor) }
func (m microversion) atLeast(minor int) bool {
	return m.minor >= minor
}

func parseMicroversion(r *http.Request) (microversion, error) {
	v := ""
	if h := r.Header.Get("OpenStack-API-Version"); h != "" {
		for _, part := range strings.Split(h, ",") {
			f := strings.Fields(part)
			if len(f) == 2 && strings.EqualFold(f[0], "compute") {
				v = f[1]
			}
		}
	}
	if v == "" {
		v = r.Header.Get("X-OpenStack-Nova-API-Version")
	}
	if v == "" {
		return microversion{2, 1}, nil
	}
	if strings.EqualFold(v, "latest") {
		return microversion{2, maxNovaMicroversion}, nil
	}
	var mv microversion
	if _, err := fmt.Sscanf(v, "%d.%d", &mv.major, &mv.minor); err != nil {
		return mv, fmt.Errorf("Invalid API version request string %s", v)
	}
	if mv.major != 2 || mv.minor < 1 || mv.minor > maxNovaMicroversion {
		return mv, fmt.Errorf("Version %s is not supported by the API. Minimum is 2.1 and maximum is 2.%d.", v, maxNovaMicroversion)
	}
	return mv, nil
}

func (nv *nova) computeVersion(cur bool) obj {
	if !cur {
		return obj{"id": "v2.0", "status": "SUPPORTED", "version": "", "min_version": "", "updated": "2011-01-21T11:33:21Z",
			"links": []obj{{"rel": "self", "href": nv.c.url + "/compute/v2/"}}}
	}
	return obj{"id": "v2.1", "status": "CURRENT", "version": "2." + strconv.Itoa(maxNovaMicroversion), "min_version": "2.1",
		"updated": "2013-07-23T11:33:21Z", "links": []obj{{"rel": "self", "href": nv.c.url + "/compute/v2.1/"},
			{"rel": "describedby", "type": "text/html", "href": "http://docs.openstack.org/"}},
		"media-types": []obj{{"base": "application/json", "type": "application/vnd.openstack.compute+json;version=2.1"}}}
}

func (nv *nova) serve(w http.ResponseWriter, r *http.Request, segs []string) {
	const svc = SvcCompute
	if len(segs) == 0 {
		writeJSON(w, http.StatusOK, obj{"versions": []obj{nv.computeVersion(false), nv.computeVersion(true)}})
		return
	}
	if segs[0] != "v2.1" {
		notFoundPath(w, r, svc)
		return
	}
	segs = segs[1:]
	mv, err := parseMicroversion(r)
	if err != nil {
		fail(w, svc, http.StatusNotAcceptable, "", err.Error())
		return
	}
	w.Header().Set("X-OpenStack-Nova-API-Version", mv.String())
	w.Header().Set("OpenStack-API-Version", "compute "+mv.String())
	w.Header().Set("Vary", "OpenStack-API-Version, X-OpenStack-Nova-API-Version")
	if len(segs) == 0 {
		writeJSON(w, http.StatusOK, obj{"version": nv.computeVersion(true)})
		return
	}
	t := nv.c.authenticate(w, r)
	if t == nil {
		return
	}
	// tolerate the legacy /v2.1/{project_id}/... form
	if len(segs) > 1 && segs[0] == t.project.ID {
		segs = segs[1:]
	}
	nv.rt.serve(w, r, cleanPath(append([]string{"compute", "v2.1"}, segs...)), &caller{t: t, mv: mv})
}

// ---- flavors ----

func (nv *nova) flavor(id string) *Flavor {
	for _, f := range nv.flavors {
		if f.ID == id {
			return f
		}
	}
	return nil
}

func (nv *nova) flavorJSON(f *Flavor, detail bool, mv microversion) obj {
	links := []obj{{"rel": "self", "href": nv.c.url + "/compute/v2.1/flavors/" + f.ID}, {"rel": "bookmark", "href": nv.c.url + "/compute/flavors/" + f.ID}}
	o := obj{"id": f.ID, "name": f.Name, "links": links}
	if mv.atLeast(55) {
		o["description"] = nil
	}
	if !detail {
		return o
	}
	o["vcpus"], o["ram"], o["disk"] = f.VCPUs, f.RAM, f.Disk
	o["OS-FLV-EXT-DATA:ephemeral"], o["swap"], o["rxtx_factor"] = 0, "", 1.0
	o["os-flavor-access:is_public"], o["OS-FLV-DISABLED:disabled"] = true, false
	if mv.atLeast(61) {
		o["extra_specs"] = obj{}
	}
	return o
}

// ---- servers ----

func (nv *nova) serverJSON(s *server, mv microversion) obj {
	links := []obj{{"rel": "self", "href": nv.c.url + "/compute/v2.1/servers/" + s.ID}, {"rel": "bookmark", "href": nv.c.url + "/compute/servers/" + s.ID}}
	var img any = ""
	if s.ImageID != "" {
		img = obj{"id": s.ImageID, "links": []obj{{"rel": "bookmark", "href": nv.c.url + "/compute/images/" + s.ImageID}}}
	}
	var flv obj
	if f := nv.flavor(s.FlavorID); f != nil && mv.atLeast(47) {
		flv = obj{"vcpus": f.VCPUs, "ram": f.RAM, "disk": f.Disk, "ephemeral": 0, "swap": 0, "original_name": f.Name, "extra_specs": obj{}}
	} else {
		flv = obj{"id": s.FlavorID, "links": []obj{{"rel": "bookmark", "href": nv.c.url + "/compute/flavors/" + s.FlavorID}}}
	}
	addrs := nv.c.network.addresses(s.Ports)
	if s.Status == "BUILD" && s.TaskState != "spawning" {
		addrs = obj{}
	}
	vols := []obj{}
	for _, v := range s.Volumes {
		o := obj{"id": v.ID}
		if mv.atLeast(3) {
			o["delete_on_termination"] = v.DeleteOnTermination
		}
		vols = append(vols, o)
	}
	meta := obj{}
	for k, v := range s.Meta {
		meta[k] = v
	}
	var task, launched any
	if s.TaskState != "" {
		task = s.TaskState
	}
	if !s.Launched.IsZero() {
		launched = tsMicro(s.Launched)
	}
	var keyName any
	if s.KeyName != "" {
		keyName = s.KeyName
	}
	// Nova reads a server's groups off its ports
	names := s.SecurityGroups
	if len(s.Ports) > 0 {
		names = nv.c.network.groupNames(s.Ports)
	}
	sgs := []obj{}
	for _, g := range names {
		sgs = append(sgs, obj{"name": g})
	}
	cd := ""
	if s.ConfigDrive {
		cd = "True"
	}
	o := obj{
		"id": s.ID, "name": s.Name, "status": s.Status, "tenant_id": s.ProjectID, "user_id": s.UserID,
		"metadata": meta, "hostId": "a3f1c0c6e0d2b9d0f6b9b1e", "image": img, "flavor": flv,
		"created": tsZ(s.Created), "updated": tsZ(s.Updated), "addresses": addrs, "accessIPv4": "", "accessIPv6": "",
		"links": links, "OS-DCF:diskConfig": "MANUAL", "progress": 0, "OS-EXT-AZ:availability_zone": s.AZ,
		"config_drive": cd, "key_name": keyName, "OS-SRV-USG:launched_at": launched, "OS-SRV-USG:terminated_at": nil,
		"security_groups": sgs, "OS-EXT-STS:task_state": task, "OS-EXT-STS:vm_state": s.VMState,
		"OS-EXT-STS:power_state": s.Power, "os-extended-volumes:volumes_attached": vols,
		"OS-EXT-SRV-ATTR:host": "lab", "OS-EXT-SRV-ATTR:hypervisor_hostname": "lab", "OS-EXT-SRV-ATTR:instance_name": "instance-" + s.ID[:8],
	}
	if s.Status == "ERROR" && s.Fault != nil {
		o["fault"] = s.Fault
	}
	if mv.atLeast(9) {
		o["locked"] = false
	}
	if mv.atLeast(19) {
		o["description"] = nil
	}
	if mv.atLeast(26) {
		o["tags"] = []string{}
	}
	if mv.atLeast(63) {
		o["trusted_image_certificates"] = nil
	}
	if mv.atLeast(73) {
		o["locked_reason"] = nil
	}
	if mv.atLeast(16) {
		o["host_status"] = "UP"
	}
	return o
}

func (nv *nova) listServers(w http.ResponseWriter, r *http.Request, t *token, mv microversion, detail bool) {
	q := r.URL.Query()
	var nameRE *regexp.Regexp
	if n := q.Get("name"); n != "" {
		var err error
		if nameRE, err = regexp.Compile(n); err != nil {
			nameRE = regexp.MustCompile(regexp.QuoteMeta(n))
		}
	}
	if _, ok := q["all_tenants"]; ok && !t.isAdmin() {
		rule := "index"
		if detail {
			rule = "detail"
		}
		fail(w, SvcCompute, http.StatusForbidden, "", "Policy doesn't allow os_compute_api:servers:"+rule+":get_all_tenants to be performed.")
		return
	}
	allTenants := q.Get("all_tenants") != "" && q.Get("all_tenants") != "0" && !strings.EqualFold(q.Get("all_tenants"), "false")
	nv.mu.Lock()
	defer nv.mu.Unlock()
	all := sortedServers(nv.servers)
	// newest first, like Nova's default created_at desc
	for i, j := 0, len(all)-1; i < j; i, j = i+1, j-1 {
		all[i], all[j] = all[j], all[i]
	}
	var sel []*server
	for _, s := range all {
		if (s.ProjectID != t.project.ID && !allTenants) || !listed(s.listable) {
			continue
		}
		if nameRE != nil && !nameRE.MatchString(s.Name) {
			continue
		}
		if st := q.Get("status"); st != "" && !strings.EqualFold(st, s.Status) {
			continue
		}
		if v := q.Get("image"); v != "" && v != s.ImageID {
			continue
		}
		if v := q.Get("flavor"); v != "" && v != s.FlavorID {
			continue
		}
		sel = append(sel, s)
	}
	if m := q.Get("marker"); m != "" {
		var ok bool
		if sel, ok = afterMarker(sel, m, func(s *server) string { return s.ID }); !ok {
			fail(w, SvcCompute, http.StatusBadRequest, "", "marker ["+m+"] not found")
			return
		}
	}
	limit := queryInt(r, "limit", 1000)
	out := []obj{}
	for i, s := range sel {
		if i >= limit {
			break
		}
		if detail {
			out = append(out, nv.serverJSON(s, mv))
		} else {
			out = append(out, obj{"id": s.ID, "name": s.Name, "links": []obj{{"rel": "self", "href": nv.c.url + "/compute/v2.1/servers/" + s.ID}}})
		}
	}
	resp := obj{"servers": out}
	if len(sel) > limit && limit > 0 {
		nq := r.URL.Query()
		nq.Set("marker", sel[limit-1].ID)
		nq.Set("limit", strconv.Itoa(limit))
		resp["servers_links"] = []obj{{"rel": "next", "href": nv.c.url + reqPath(r) + "?" + nq.Encode()}}
	}
	writeJSON(w, http.StatusOK, resp)
}

func anyInt(v any) (int, bool) {
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		return int(n), err == nil
	case string:
		n, err := strconv.Atoi(x)
		return n, err == nil
	case float64:
		return int(x), true
	}
	return 0, false
}

func anyBool(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case string:
		b, _ := strconv.ParseBool(x)
		return b
	}
	return false
}

// buildServer takes s from BUILD to ACTIVE (or ERROR): it makes the root
// disk (a clone of the image, or the boot volume's) and boots a machine.
func (nv *nova) buildServer(s *server) {
	nv.mu.Lock()
	if s.deleted || nv.injectedBuildFault(s) {
		nv.mu.Unlock()
		return
	}
	s.TaskState = "spawning"
	var src diskSource
	var existingVolDisk string
	switch {
	case s.bootVol == "":
		src = nv.c.image.bootSource(s.ImageID)
	case s.bootSnapshot != "":
		src = diskSource{disk: nv.c.volume.snapshotDisk(s.bootSnapshot)}
	case s.bootVolNew:
		src = nv.c.image.bootSource(s.bootImage)
	default:
		existingVolDisk = nv.c.volume.diskOf(s.bootVol)
	}
	spec := MachineSpec{ID: s.ID, Name: s.Name, Hostname: hostname(s.Name), SSHDelay: s.sshDelay,
		FixedIP: nv.c.network.firstFixedIP(s.Ports), Firewall: nv.c.network.firewallFor(s.Ports)}
	if boot := nv.c.o.Timing.GuestBoot; boot > 0 {
		spec.SSHDelay = max(spec.SSHDelay, nv.c.took(boot, 0))
	}
	nv.mu.Unlock()
	disk, orphan, ok := nv.rootDisk(s, src, existingVolDisk)
	if !ok {
		return
	}
	if orphan {
		defer nv.c.deleteDisk(disk)
	}
	spec.Disk = disk
	nv.boot(s, spec)
}

// injectedBuildFault applies a server_error or server_stuck_build fault;
// nv.mu held.
func (nv *nova) injectedBuildFault(s *server) bool {
	if s.fault != nil {
		msg := s.fault.Message
		if msg == "" {
			msg = "No valid host was found. There are not enough hosts available."
		}
		s.Status, s.VMState, s.TaskState, s.Updated = "ERROR", "error", "", time.Now()
		s.Fault = obj{"code": 500, "message": msg, "created": tsZ(time.Now())}
		if s.bootVolNew {
			nv.c.volume.bootFailed(s.bootVol)
		}
		nv.c.logf("cloud: server %s ERROR (injected): %s", s.ID, msg)
		return true
	}
	if s.stuck {
		nv.c.logf("cloud: server %s stuck in BUILD (injected)", s.ID)
		return true
	}
	return false
}

// buildFailed puts s in ERROR with err as its fault.
func (nv *nova) buildFailed(s *server, err error) {
	nv.mu.Lock()
	defer nv.mu.Unlock()
	if !s.deleted {
		s.Status, s.VMState, s.TaskState, s.Updated = "ERROR", "error", "", time.Now()
		s.Fault = obj{"code": 500, "message": err.Error(), "created": tsZ(time.Now())}
	}
	nv.c.logf("cloud: server %s ERROR: %v", s.ID, err)
}

// rootDisk makes s's root disk (or takes its existing boot volume's) and
// commits it to s before booting, so deletion can clean it up; orphan says
// the new boot volume went away meanwhile and the disk is to be deleted
// after the build. ok is false when the build ends here.
func (nv *nova) rootDisk(s *server, src diskSource, existingVolDisk string) (disk string, orphan, ok bool) {
	if existingVolDisk != "" {
		disk = existingVolDisk
	} else {
		var err error
		if disk, err = nv.c.makeDisk(src); err != nil {
			nv.buildFailed(s, fmt.Errorf("Build of instance %s aborted: %v", s.ID, err))
			return "", false, false
		}
	}
	nv.mu.Lock()
	defer nv.mu.Unlock()
	if s.deleted {
		if existingVolDisk == "" {
			nv.c.deleteDisk(disk)
		}
		return "", false, false
	}
	if s.bootVol == "" {
		s.Disk = disk
	} else if !nv.c.volume.attached(s.bootVol, disk, s.bootVolNew) && s.bootVolNew {
		orphan = true
	}
	return disk, orphan, true
}

// boot starts s's machine and makes s ACTIVE.
func (nv *nova) boot(s *server, spec MachineSpec) {
	m, err := nv.c.o.Hypervisor.Boot(spec, func(ps PowerState) { nv.onPower(s, ps) })
	if err != nil {
		nv.buildFailed(s, fmt.Errorf("Build of instance %s aborted: %v", s.ID, err))
		return
	}
	nv.mu.Lock()
	if s.deleted {
		nv.mu.Unlock()
		if err := m.Destroy(); err != nil {
			nv.c.logf("cloud: Destroy %s: %v", s.ID, err)
		}
		return
	}
	s.machine = m
	s.Status, s.VMState, s.TaskState, s.Power = "ACTIVE", "active", "", novaPowerRunning
	s.Launched, s.Updated = time.Now(), time.Now()
	nv.c.states.note("server", s.ID, "ACTIVE")
	fips := nv.c.network.floatingIPsOn(s.Ports)
	nv.mu.Unlock()
	for _, ip := range fips {
		if err := m.AddFloatingIP(ip); err != nil {
			nv.c.logf("cloud: AddFloatingIP(%s): %v", ip, err)
		}
	}
	nv.c.logf("cloud: server %s (%s) ACTIVE", s.ID, s.Name)
	nv.refreshFirewalls() // its port joined its groups' members
	nv.maybeHardReset(s)
}

// refreshFirewalls gives every server's machine its port's filter as it
// now stands, after a group, a rule or a port changed (Neutron's agent
// updates every port the change touches). Refreshes run one at a time,
// each reading the state when it runs, so the last one applied is the
// latest.
func (nv *nova) refreshFirewalls() {
	nv.fwMu.Lock()
	defer nv.fwMu.Unlock()
	type job struct {
		id    string
		m     FirewalledMachine
		ports []string
	}
	var jobs []job
	nv.mu.Lock()
	for _, s := range sortedServers(nv.servers) {
		if m, ok := s.machine.(FirewalledMachine); ok && !s.deleted {
			jobs = append(jobs, job{s.ID, m, append([]string(nil), s.Ports...)})
		}
	}
	nv.mu.Unlock()
	for _, j := range jobs {
		if err := j.m.SetFirewall(nv.c.network.firewallFor(j.ports)); err != nil {
			nv.c.logf("cloud: the security groups of %s: %v", j.id, err)
		}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// maybeHardReset applies a server_hard_reset fault to an ACTIVE server.
func (nv *nova) maybeHardReset(s *server) {
	nv.mu.Lock()
	f := nv.c.takeFault(FaultServerHardReset, s.Name)
	nv.mu.Unlock()
	if f == nil {
		return
	}
	nv.c.goAfter(f.Delay, func() {
		nv.mu.Lock()
		m := s.machine
		nv.mu.Unlock()
		if m == nil {
			return
		}
		nv.c.logf("cloud: server %s hard reset (injected)", s.ID)
		if err := m.HardReset(); err != nil {
			nv.c.logf("cloud: HardReset %s: %v", s.ID, err)
		}
	})
}

// onPower records guest-initiated power changes.
func (nv *nova) onPower(s *server, ps PowerState) {
	nv.mu.Lock()
	defer nv.mu.Unlock()
	if s.deleted || s.machine == nil {
		return
	}
	switch ps {
	case PowerShutdown, PowerCrashed:
		if s.TaskState == "" && s.Status == "ACTIVE" {
			s.Status, s.VMState = "SHUTOFF", "stopped"
			nv.c.states.note("server", s.ID, "SHUTOFF")
		}
		s.Power = novaPowerShutdown
		if ps == PowerCrashed {
			s.Power = novaPowerCrashed
		}
	case PowerRunning:
		s.Power = novaPowerRunning
		if s.TaskState == "" && s.Status == "SHUTOFF" {
			s.Status, s.VMState = "ACTIVE", "active"
		}
	}
	s.Updated = time.Now()
}

// deleteServer starts deletion; nv.mu held.
func (nv *nova) deleteServer(s *server) {
	s.deleted = true
	s.TaskState = "deleting"
	nv.c.logf("cloud: server %s deleting", s.ID)
	nv.c.goAfter(nv.c.took(nv.c.o.Timing.ServerDelete, 0), func() { nv.finishDelete(s) })
}

func (nv *nova) finishDelete(s *server) {
	nv.mu.Lock()
	m := s.machine
	s.machine = nil
	fips := nv.c.network.unplugServer(s.Ports, s.ownPorts)
	delete(nv.passwords, s.ID)
	var disks []string
	if s.Disk != "" {
		disks = append(disks, s.Disk)
	}
	disks = append(disks, nv.c.volume.detach(s.Volumes)...)
	delete(nv.servers, s.ID)
	nv.mu.Unlock()
	if m != nil {
		for _, ip := range fips {
			if err := m.RemoveFloatingIP(ip); err != nil {
				nv.c.logf("cloud: removing %s from %s: %v", ip, s.ID, err)
			}
		}
		if err := m.Destroy(); err != nil {
			nv.c.logf("cloud: Destroy %s: %v", s.ID, err)
		}
	}
	for _, d := range disks {
		nv.c.deleteDisk(d)
	}
	nv.refreshFirewalls() // its port left its groups
	nv.c.logf("cloud: server %s deleted", s.ID)
}

// serverAction handles POST /servers/{id}/action; nv.mu held.
// snapshotServer creates a queued image and snapshots s's root disk into it
// in the background; nv.mu held.
func (nv *nova) snapshotServer(s *server, name string, meta map[string]string, t *token) (*image, *httpErr) {
	props := map[string]any{}
	var base *image
	minDisk := 0
	if f := nv.flavor(s.FlavorID); f != nil {
		minDisk = f.Disk
	}
	src := s.Disk
	if s.ImageID != "" {
		base = nv.c.image.imageCopy(s.ImageID)
	}
	if base != nil {
		for k, v := range base.Props {
			props[k] = v
		}
		if base.MinDisk > minDisk {
			minDisk = base.MinDisk
		}
	}
	if s.ImageID == "" && len(s.Volumes) > 0 {
		return nv.snapshotVolumeBacked(s, name, meta, t)
	}
	props["image_type"] = "snapshot"
	props["instance_uuid"] = s.ID
	props["user_id"] = t.user.ID
	props["owner_user_name"] = t.user.Name
	props["owner_project_name"] = t.project.Name
	props["base_image_ref"] = s.ImageID
	// The caller's metadata wins over Nova's own properties, as in Nova's
	// _create_image (properties.update(extra_properties)): a template's
	// image_type = "image" stays.
	for k, v := range meta {
		props[k] = v
	}
	img := newImage(name, t.project.ID)
	img.DiskFormat, img.ContainerFormat = "qcow2", "bare"
	img.MinDisk = minDisk
	img.Props = props
	img.Visibility = "private"
	if base != nil {
		img.DiskFormat, img.ContainerFormat, img.MinRAM = base.DiskFormat, base.ContainerFormat, base.MinRAM
	}
	nv.c.image.add(img)
	s.TaskState = "image_snapshot"
	nv.c.logf("cloud: server %s snapshot -> image %s", s.ID, img.ID)
	nv.c.goAfter(nv.c.o.Timing.ImageSave/4, func() {
		nv.mu.Lock()
		if !s.deleted {
			s.TaskState = "image_uploading"
		}
		nv.mu.Unlock()
		nv.c.image.saveImageFromDisk(img, src, func() {
			nv.mu.Lock()
			defer nv.mu.Unlock()
			if !s.deleted && strings.HasPrefix(s.TaskState, "image_") {
				s.TaskState = ""
			}
		})
	})
	return img, nil
}

// ---- what compute offers the other services and Cloud ----

// addFlavor preloads a flavor (replacing one with the same id).
func (nv *nova) addFlavor(f Flavor) {
	nv.mu.Lock()
	defer nv.mu.Unlock()
	if f.ID == "" {
		f.ID = newUUID()
	}
	for i, g := range nv.flavors {
		if g.ID == f.ID {
			nv.flavors[i] = &f
			return
		}
	}
	nv.flavors = append(nv.flavors, &f)
}

// machineOf is the machine of live server id, or nil.
func (nv *nova) machineOf(id string) Machine {
	nv.mu.Lock()
	defer nv.mu.Unlock()
	if s := nv.servers[id]; s != nil {
		return s.machine
	}
	return nil
}

// addFloatingIP puts ip on server id's machine (if it runs); called by
// network after it released its lock.
func (nv *nova) addFloatingIP(id, ip string) {
	if m := nv.machineOf(id); m != nil {
		if err := m.AddFloatingIP(ip); err != nil {
			nv.c.logf("cloud: AddFloatingIP(%s): %v", ip, err)
		}
	}
}

// removeFloatingIP takes ip off server id's machine (if it runs).
func (nv *nova) removeFloatingIP(id, ip string) {
	if m := nv.machineOf(id); m != nil {
		if err := m.RemoveFloatingIP(ip); err != nil {
			nv.c.logf("cloud: RemoveFloatingIP(%s): %v", ip, err)
		}
	}
}

// portDeleted forgets a port deleted through Neutron.
func (nv *nova) portDeleted(id, portID string) {
	nv.mu.Lock()
	defer nv.mu.Unlock()
	if s := nv.servers[id]; s != nil && !s.deleted {
		s.Ports = removeStr(s.Ports, portID)
	}
}

// takeMachines detaches every machine (for Close to destroy).
func (nv *nova) takeMachines() []Machine {
	nv.mu.Lock()
	defer nv.mu.Unlock()
	var ms []Machine
	for _, s := range nv.servers {
		if s.machine != nil {
			ms = append(ms, s.machine)
			s.machine = nil
		}
	}
	return ms
}

// activeServers lists ACTIVE servers not being deleted.
func (nv *nova) activeServers() []*server {
	nv.mu.Lock()
	defer nv.mu.Unlock()
	var out []*server
	for _, s := range nv.servers {
		if s.Status == "ACTIVE" && !s.deleted {
			out = append(out, s)
		}
	}
	return out
}

// status lists live servers and keypairs for Cloud.Status.
func (nv *nova) status() (servers, keypairs []StatusItem) {
	nv.mu.Lock()
	defer nv.mu.Unlock()
	servers, keypairs = []StatusItem{}, []StatusItem{}
	for _, s := range nv.servers {
		servers = append(servers, StatusItem{s.ID, s.Name, s.Status})
	}
	for _, k := range nv.keypairs {
		keypairs = append(keypairs, StatusItem{k.Name, k.Name, ""})
	}
	return servers, keypairs
}

// metadataFor returns metadata for the server owning fixedIP, or nil.
func (nv *nova) metadataFor(fixedIP string) *Metadata {
	nv.mu.Lock()
	defer nv.mu.Unlock()
	for _, s := range nv.servers {
		if s.deleted || !nv.c.network.hasFixedIP(s.Ports, fixedIP) {
			continue
		}
		md := &Metadata{UUID: s.ID, Name: s.Name, Hostname: hostname(s.Name), Meta: map[string]string{}, PublicKeys: map[string]string{},
			ProjectID: s.ProjectID, ConfigDrive: s.ConfigDrive}
		for k, v := range s.Meta {
			md.Meta[k] = v
		}
		if s.KeyName != "" {
			if kp := nv.keypairs[s.UserID+"/"+s.KeyName]; kp != nil {
				md.PublicKeys[kp.Name] = kp.PublicKey
			}
		}
		if s.UserData != nil {
			md.UserData = append([]byte(nil), s.UserData...)
		}
		return md
	}
	return nil
}
