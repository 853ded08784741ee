package cloud

import (
	"context"
	"crypto/ed25519"
	"crypto/md5"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// nova is the compute service. It is first in the lock order: it calls
// into volume, image and network with its lock held, and they never call
// back into it while holding theirs.
type nova struct {
	c *Cloud

	mu        sync.Mutex
	flavors   []*Flavor
	servers   map[string]*server
	keypairs  map[string]*keypair // by user id + "/" + name
	passwords map[string]string   // server id -> encrypted admin password
	quotas    quotas
}

func newNova(c *Cloud) *nova {
	return &nova{c: c, servers: map[string]*server{}, keypairs: map[string]*keypair{}, quotas: newQuotas(novaQuotaDefaults)}
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
	switch segs[0] {
	case "flavors":
		nv.serveFlavors(w, r, segs[1:], mv)
	case "os-keypairs":
		nv.serveKeypairs(w, r, segs[1:], t, mv)
	case "servers":
		nv.serveServers(w, r, segs[1:], t, mv)
	case "os-availability-zone":
		writeJSON(w, http.StatusOK, obj{"availabilityZoneInfo": []obj{{"zoneName": "nova", "zoneState": obj{"available": true}, "hosts": nil}}})
	case "os-quota-sets":
		nv.serveQuotaSets(w, r, segs[1:], t, mv)
	case "limits":
		nv.mu.Lock()
		u, q := nv.usage(t.project.ID), nv.quotas.of(t.project.ID)
		nv.mu.Unlock()
		writeJSON(w, http.StatusOK, obj{"limits": obj{"rate": []obj{}, "absolute": obj{
			"maxTotalInstances": q["instances"], "maxTotalCores": q["cores"], "maxTotalRAMSize": q["ram"], "maxServerMeta": q["metadata_items"],
			"maxImageMeta": 128, "maxPersonality": q["injected_files"], "maxPersonalitySize": q["injected_file_content_bytes"], "maxTotalKeypairs": q["key_pairs"],
			"maxServerGroups": q["server_groups"], "maxServerGroupMembers": q["server_group_members"], "maxSecurityGroups": 10, "maxSecurityGroupRules": 20,
			"maxTotalFloatingIps": 10, "totalInstancesUsed": u["instances"], "totalCoresUsed": u["cores"], "totalRAMUsed": u["ram"],
			"totalFloatingIpsUsed": 0, "totalSecurityGroupsUsed": 0, "totalServerGroupsUsed": 0}}})
	default:
		notFoundPath(w, r, svc)
	}
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

func (nv *nova) serveFlavors(w http.ResponseWriter, r *http.Request, segs []string, mv microversion) {
	nv.mu.Lock()
	defer nv.mu.Unlock()
	if r.Method != http.MethodGet {
		methodNotAllowed(w, SvcCompute)
		return
	}
	switch {
	case len(segs) == 0 || (len(segs) == 1 && segs[0] == "detail"):
		detail := len(segs) == 1
		out := []obj{}
		minDisk, minRAM := queryInt(r, "minDisk", 0), queryInt(r, "minRam", 0)
		for _, f := range nv.flavors {
			if f.Disk >= minDisk && f.RAM >= minRAM {
				out = append(out, nv.flavorJSON(f, detail, mv))
			}
		}
		writeJSON(w, http.StatusOK, obj{"flavors": out})
	case len(segs) >= 1:
		f := nv.flavor(segs[0])
		if f == nil {
			fail(w, SvcCompute, http.StatusNotFound, "", "Flavor "+segs[0]+" could not be found.")
			return
		}
		if len(segs) == 2 && segs[1] == "os-extra_specs" {
			writeJSON(w, http.StatusOK, obj{"extra_specs": obj{}})
			return
		}
		if len(segs) == 2 && segs[1] == "os-flavor-access" {
			writeJSON(w, http.StatusOK, obj{"flavor_access": []obj{}})
			return
		}
		writeJSON(w, http.StatusOK, obj{"flavor": nv.flavorJSON(f, true, mv)})
	}
}

// ---- keypairs ----

var keyNameRE = regexp.MustCompile(`^[A-Za-z0-9 _.@-]{1,255}$`)

func fingerprint(pub ssh.PublicKey) string {
	sum := md5.Sum(pub.Marshal())
	parts := make([]string, len(sum))
	for i, b := range sum {
		parts[i] = fmt.Sprintf("%02x", b)
	}
	return strings.Join(parts, ":")
}

func (nv *nova) keypairJSON(k *keypair, mv microversion, full bool) obj {
	o := obj{"name": k.Name, "public_key": k.PublicKey, "fingerprint": k.Fingerprint}
	if mv.atLeast(2) {
		o["type"] = k.Type
	}
	if mv.atLeast(10) || full {
		o["user_id"] = k.UserID
	}
	if full {
		o["created_at"], o["deleted"], o["deleted_at"], o["updated_at"], o["id"] = tsMicro(k.Created), false, nil, nil, 1
	}
	return o
}

func (nv *nova) serveKeypairs(w http.ResponseWriter, r *http.Request, segs []string, t *token, mv microversion) {
	const svc = SvcCompute
	nv.mu.Lock()
	defer nv.mu.Unlock()
	if len(segs) == 0 {
		switch r.Method {
		case http.MethodGet:
			out := []obj{}
			for _, k := range nv.keypairs {
				if k.UserID == t.user.ID {
					out = append(out, obj{"keypair": nv.keypairJSON(k, mv, false)})
				}
			}
			writeJSON(w, http.StatusOK, obj{"keypairs": out})
		case http.MethodPost:
			var b struct {
				Keypair struct {
					Name      string `json:"name"`
					PublicKey string `json:"public_key"`
					Type      string `json:"type"`
				} `json:"keypair"`
			}
			if err := decodeBody(r, &b); err != nil {
				fail(w, svc, http.StatusBadRequest, "", err.Error())
				return
			}
			kb := b.Keypair
			if !keyNameRE.MatchString(kb.Name) {
				fail(w, svc, http.StatusBadRequest, "", "Invalid input for field/attribute name.")
				return
			}
			if nv.keypairs[t.user.ID+"/"+kb.Name] != nil {
				fail(w, svc, http.StatusConflict, "", "Key pair '"+kb.Name+"' already exists.")
				return
			}
			if kb.Type == "" {
				kb.Type = "ssh"
			}
			k := &keypair{Name: kb.Name, Type: kb.Type, UserID: t.user.ID, Created: time.Now()}
			var private string
			if kb.PublicKey == "" {
				_, priv, _ := ed25519.GenerateKey(rand.Reader)
				signer, err := ssh.NewSignerFromKey(priv)
				if err != nil {
					fail(w, svc, http.StatusInternalServerError, "", err.Error())
					return
				}
				blk, err := ssh.MarshalPrivateKey(priv, "Generated-by-Nova")
				if err != nil {
					fail(w, svc, http.StatusInternalServerError, "", err.Error())
					return
				}
				private = string(pem.EncodeToMemory(blk))
				k.PublicKey = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey()))) + " Generated-by-Nova"
				k.Fingerprint = fingerprint(signer.PublicKey())
			} else {
				pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(kb.PublicKey))
				if err != nil {
					fail(w, svc, http.StatusBadRequest, "", "Keypair data is invalid: failed to generate fingerprint")
					return
				}
				k.PublicKey = strings.TrimSpace(kb.PublicKey)
				k.Fingerprint = fingerprint(pub)
			}
			nv.keypairs[t.user.ID+"/"+k.Name] = k
			o := nv.keypairJSON(k, mv, false)
			if private != "" {
				o["private_key"] = private
			}
			status := http.StatusOK
			if mv.atLeast(2) {
				status = http.StatusCreated
			}
			writeJSON(w, status, obj{"keypair": o})
		default:
			methodNotAllowed(w, svc)
		}
		return
	}
	k := nv.keypairs[t.user.ID+"/"+segs[0]]
	if k == nil || len(segs) != 1 {
		fail(w, svc, http.StatusNotFound, "", "Keypair "+segs[0]+" not found for user "+t.user.ID)
		return
	}
	switch r.Method {
	case http.MethodGet:
		writeJSON(w, http.StatusOK, obj{"keypair": nv.keypairJSON(k, mv, true)})
	case http.MethodDelete:
		delete(nv.keypairs, t.user.ID+"/"+k.Name)
		if mv.atLeast(2) {
			w.WriteHeader(http.StatusNoContent)
		} else {
			w.WriteHeader(http.StatusAccepted)
		}
	default:
		methodNotAllowed(w, svc)
	}
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
	sgs := []obj{}
	for _, g := range s.SecurityGroups {
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

func (nv *nova) serveServers(w http.ResponseWriter, r *http.Request, segs []string, t *token, mv microversion) {
	const svc = SvcCompute
	if len(segs) == 0 && r.Method == http.MethodPost {
		nv.createServer(w, r, t, mv)
		return
	}
	if len(segs) == 0 || (len(segs) == 1 && segs[0] == "detail") {
		if r.Method != http.MethodGet {
			methodNotAllowed(w, svc)
			return
		}
		nv.listServers(w, r, t, mv, len(segs) == 1)
		return
	}
	var after []func()
	nv.mu.Lock()
	defer func() { nv.mu.Unlock(); runAll(after) }()
	s := nv.servers[segs[0]]
	if s == nil || s.ProjectID != t.project.ID {
		fail(w, svc, http.StatusNotFound, "", "Instance "+segs[0]+" could not be found.")
		return
	}
	if s.deleted && !(len(segs) == 1 && (r.Method == http.MethodGet || r.Method == http.MethodDelete)) {
		// being deleted: Nova still shows it (task_state deleting) until gone
		fail(w, svc, http.StatusConflict, "", "Cannot act on instance "+s.ID+" while it is in task_state deleting")
		return
	}
	switch {
	case len(segs) == 1 && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, obj{"server": nv.serverJSON(s, mv)})
	case len(segs) == 1 && r.Method == http.MethodDelete:
		if !s.deleted {
			nv.deleteServer(s)
		}
		w.WriteHeader(http.StatusNoContent)
	case len(segs) == 1 && r.Method == http.MethodPut:
		var b struct {
			Server struct {
				Name *string `json:"name"`
			} `json:"server"`
		}
		if err := decodeBody(r, &b); err != nil {
			fail(w, svc, http.StatusBadRequest, "", err.Error())
			return
		}
		if b.Server.Name != nil {
			s.Name = *b.Server.Name
		}
		s.Updated = time.Now()
		writeJSON(w, http.StatusOK, obj{"server": nv.serverJSON(s, mv)})
	case len(segs) == 2 && segs[1] == "action" && r.Method == http.MethodPost:
		after = nv.serverAction(w, r, s, t, mv)
	case len(segs) == 2 && segs[1] == "metadata" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, obj{"metadata": s.Meta})
	case len(segs) == 2 && segs[1] == "os-interface" && r.Method == http.MethodGet:
		out := nv.c.network.interfaceAttachments(s.Ports)
		writeJSON(w, http.StatusOK, obj{"interfaceAttachments": out})
	case len(segs) == 2 && segs[1] == "os-volume_attachments" && r.Method == http.MethodGet:
		out := []obj{}
		for i, v := range s.Volumes {
			out = append(out, obj{"id": v.ID, "volumeId": v.ID, "serverId": s.ID, "device": fmt.Sprintf("/dev/vd%c", 'a'+i)})
		}
		writeJSON(w, http.StatusOK, obj{"volumeAttachments": out})
	case len(segs) == 2 && segs[1] == "os-server-password":
		nv.serverPassword(w, r, s)
	case len(segs) == 2 && segs[1] == "os-instance-actions" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, obj{"instanceActions": []obj{}})
	case len(segs) == 2 && segs[1] == "os-security-groups" && r.Method == http.MethodGet:
		out := nv.c.network.novaSecurityGroups(s.ProjectID)
		writeJSON(w, http.StatusOK, obj{"security_groups": out})
	default:
		notFoundPath(w, r, svc)
	}
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
		idx := -1
		for i, s := range sel {
			if s.ID == m {
				idx = i
			}
		}
		if idx < 0 {
			fail(w, SvcCompute, http.StatusBadRequest, "", "marker ["+m+"] not found")
			return
		}
		sel = sel[idx+1:]
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
		resp["servers_links"] = []obj{{"rel": "next", "href": nv.c.url + r.URL.Path + "?" + nq.Encode()}}
	}
	writeJSON(w, http.StatusOK, resp)
}

type createServerBody struct {
	Server struct {
		Name             string                  `json:"name"`
		ImageRef         string                  `json:"imageRef"`
		FlavorRef        string                  `json:"flavorRef"`
		Metadata         map[string]string       `json:"metadata"`
		UserData         string                  `json:"user_data"`
		Networks         json.RawMessage         `json:"networks"`
		SecurityGroups   []struct{ Name string } `json:"security_groups"`
		KeyName          string                  `json:"key_name"`
		AvailabilityZone string                  `json:"availability_zone"`
		ConfigDrive      any                     `json:"config_drive"`
		BDM              []struct {
			SourceType          string `json:"source_type"`
			DestinationType     string `json:"destination_type"`
			UUID                string `json:"uuid"`
			VolumeSize          any    `json:"volume_size"`
			DeleteOnTermination bool   `json:"delete_on_termination"`
			BootIndex           any    `json:"boot_index"`
		} `json:"block_device_mapping_v2"`
		MinCount any `json:"min_count"`
		MaxCount any `json:"max_count"`
	} `json:"server"`
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

func (nv *nova) createServer(w http.ResponseWriter, r *http.Request, t *token, mv microversion) {
	const svc = SvcCompute
	var b createServerBody
	if err := decodeBody(r, &b); err != nil {
		fail(w, svc, http.StatusBadRequest, "", err.Error())
		return
	}
	bs := b.Server
	bad := func(msg string) { fail(w, svc, http.StatusBadRequest, "", msg) }
	if strings.TrimSpace(bs.Name) == "" {
		bad("Invalid input for field/attribute name. Value: . '' is too short")
		return
	}
	var userData []byte
	if bs.UserData != "" {
		var err error
		if userData, err = base64.StdEncoding.DecodeString(bs.UserData); err != nil {
			bad("Invalid input for field/attribute user_data. Value: ... is not a base64 string")
			return
		}
	}
	nv.mu.Lock()
	defer nv.mu.Unlock()
	fl := nv.flavor(bs.FlavorRef)
	if fl == nil {
		bad("Flavor " + bs.FlavorRef + " could not be found.")
		return
	}
	if bs.KeyName != "" && nv.keypairs[t.user.ID+"/"+bs.KeyName] == nil {
		bad("Invalid key_name provided.")
		return
	}
	now := time.Now()
	s := &server{ID: newUUID(), Name: bs.Name, Status: "BUILD", TaskState: "scheduling", VMState: "building", Power: novaPowerNoState,
		FlavorID: fl.ID, Meta: map[string]string{}, KeyName: bs.KeyName, UserData: userData, AZ: "nova",
		ConfigDrive: anyBool(bs.ConfigDrive), Created: now, Updated: now, ownPorts: map[string]bool{},
		UserID: t.user.ID, ProjectID: t.project.ID}
	for k, v := range bs.Metadata {
		s.Meta[k] = v
	}
	if bs.AvailabilityZone != "" {
		s.AZ = bs.AvailabilityZone
	}
	for _, g := range bs.SecurityGroups {
		s.SecurityGroups = append(s.SecurityGroups, g.Name)
	}
	if len(s.SecurityGroups) == 0 {
		s.SecurityGroups = []string{"default"}
	}
	// Block devices: only a boot volume (boot_index 0, destination volume) is modelled.
	var bootVol *volume // a new volume made from an image, registered once the rest is valid
	for _, d := range bs.BDM {
		bi, _ := anyInt(d.BootIndex)
		if d.BootIndex == nil || bi != 0 {
			continue
		}
		switch {
		case d.DestinationType == "volume" && d.SourceType == "image":
			img := nv.c.image.imageCopy(d.UUID)
			if img == nil || img.Status != "active" {
				bad("Image " + d.UUID + " could not be found.")
				return
			}
			size, _ := anyInt(d.VolumeSize)
			if size <= 0 {
				bad("Images with destination_type 'volume' need to have a non-zero size specified")
				return
			}
			if size < img.MinDisk {
				bad(fmt.Sprintf("Volume is smaller than the minimum size specified in image metadata. Volume size is %d bytes, minimum size is %d bytes.", size<<30, img.MinDisk<<30))
				return
			}
			bootVol = newVolume("", size, t, now)
			bootVol.Status = "creating"
			bootVol.ImageID = img.ID
			bootVol.imageMeta = volumeImageMeta(img)
			bootVol.Bootable = true
			s.bootVol, s.bootVolNew, s.bootImage = bootVol.ID, true, img.ID
		case d.DestinationType == "volume" && d.SourceType == "volume":
			if e := nv.c.volume.checkBootable(d.UUID, t.project.ID); e != nil {
				bad(e.msg)
				return
			}
			s.bootVol = d.UUID
		case d.SourceType == "image" && (d.DestinationType == "local" || d.DestinationType == ""):
			bs.ImageRef = d.UUID
			continue
		default:
			bad("Block Device Mapping is Invalid: unsupported source_type/destination_type " + d.SourceType + "/" + d.DestinationType)
			return
		}
		s.Volumes = append(s.Volumes, attachedVol{ID: s.bootVol, DeleteOnTermination: d.DeleteOnTermination})
	}
	if s.bootVol == "" {
		img := nv.c.image.imageCopy(bs.ImageRef)
		if img == nil || img.Status != "active" {
			bad("Image " + bs.ImageRef + " could not be found.")
			return
		}
		if m, ok := snapshotMapping(img); ok {
			// A snapshot of a volume-backed server: Nova boots it from a
			// new volume made from the Cinder snapshot it names.
			if e := nv.c.volume.checkSnapshot(m.SnapshotID, t.project.ID, m.VolumeSize); e != nil {
				bad("Block Device Mapping is Invalid: " + e.msg)
				return
			}
			bootVol = newVolume("", m.VolumeSize, t, now)
			bootVol.SnapshotID, bootVol.Bootable = m.SnapshotID, true
			s.bootVol, s.bootVolNew, s.bootSnapshot = bootVol.ID, true, m.SnapshotID
			s.Volumes = append(s.Volumes, attachedVol{ID: bootVol.ID, DeleteOnTermination: m.DeleteOnTermination})
		} else {
			if fl.Disk == 0 && !t.isAdmin() {
				// Nova's os_compute_api:servers:create:zero_disk_flavor, an admin rule.
				fail(w, svc, http.StatusForbidden, "", "Only volume-backed servers are allowed for flavors with zero disk.")
				return
			}
			if need := max(int64(img.MinDisk)<<30, img.VirtualSize); fl.Disk > 0 && need > int64(fl.Disk)<<30 {
				bad(fmt.Sprintf("Flavor's disk is too small for requested image. Flavor disk is %d bytes, image is %d bytes.", int64(fl.Disk)<<30, need))
				return
			}
			s.ImageID = img.ID
		}
	}
	// Networks.
	var nets []nicRequest
	var netStr string
	if len(bs.Networks) > 0 && json.Unmarshal(bs.Networks, &netStr) == nil {
		if netStr != "auto" && netStr != "none" {
			bad("Invalid input for field/attribute networks.")
			return
		}
	} else if len(bs.Networks) > 0 {
		if err := json.Unmarshal(bs.Networks, &nets); err != nil {
			bad("Invalid input for field/attribute networks.")
			return
		}
	} else if mv.atLeast(37) {
		bad("Invalid input for field/attribute server. Value: ... 'networks' is a required property")
		return
	} else {
		netStr = "auto"
	}
	if netStr == "auto" {
		nets = append(nets, nicRequest{UUID: nv.c.network.defaultNetworkID()})
	}
	// Nova checks the quota after validating the request, before it
	// makes ports or volumes.
	if e := nv.checkServerQuota(t.project.ID, fl); e != nil {
		fail(w, svc, e.status, "", e.msg)
		return
	}
	ports, own, e := nv.c.network.plugServer(s.ID, t.project.ID, nets)
	if e != nil {
		fail(w, svc, e.status, "", e.msg)
		return
	}
	s.Ports, s.ownPorts = ports, own
	if bootVol != nil {
		bootVol.ServerID = s.ID
		nv.c.volume.add(bootVol)
	} else if s.bootVol != "" {
		if e := nv.c.volume.reserve(s.bootVol, s.ID, true); e != nil {
			nv.c.network.unplugServer(s.Ports, s.ownPorts)
			bad(e.msg)
			return
		}
	}
	if f := nv.c.takeFault(FaultServerError, s.Name); f != nil {
		s.fault = f
	} else if f := nv.c.takeFault(FaultServerStuck, s.Name); f != nil {
		s.stuck = true
	}
	if f := nv.c.takeFault(FaultSSHDelay, s.Name); f != nil {
		s.sshDelay = f.Delay
	}
	s.listable = nv.c.listableAt(now)
	nv.servers[s.ID] = s
	nv.c.logf("cloud: server %s (%s) BUILD", s.ID, s.Name)
	nv.c.goAfter(nv.c.took(nv.c.o.Timing.ServerBuild, 0), func() { nv.buildServer(s) })
	resp := obj{"id": s.ID, "links": []obj{{"rel": "self", "href": nv.c.url + "/compute/v2.1/servers/" + s.ID}},
		"OS-DCF:diskConfig": "MANUAL", "adminPass": newHexID()[:12]}
	sgs := []obj{}
	for _, g := range s.SecurityGroups {
		sgs = append(sgs, obj{"name": g})
	}
	resp["security_groups"] = sgs
	writeJSON(w, http.StatusAccepted, obj{"server": resp})
}

// buildServer takes s from BUILD to ACTIVE (or ERROR): it makes the root
// disk (a clone of the image, or the boot volume's) and boots a machine.
func (nv *nova) buildServer(s *server) {
	nv.mu.Lock()
	if s.deleted {
		nv.mu.Unlock()
		return
	}
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
		nv.mu.Unlock()
		return
	}
	if s.stuck {
		nv.c.logf("cloud: server %s stuck in BUILD (injected)", s.ID)
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
		FixedIP: nv.c.network.firstFixedIP(s.Ports)}
	if boot := nv.c.o.Timing.GuestBoot; boot > 0 {
		spec.SSHDelay = max(spec.SSHDelay, nv.c.took(boot, 0))
	}
	nv.mu.Unlock()

	errorOut := func(err error) {
		nv.mu.Lock()
		defer nv.mu.Unlock()
		if !s.deleted {
			s.Status, s.VMState, s.TaskState, s.Updated = "ERROR", "error", "", time.Now()
			s.Fault = obj{"code": 500, "message": err.Error(), "created": tsZ(time.Now())}
		}
		nv.c.logf("cloud: server %s ERROR: %v", s.ID, err)
	}
	var disk string
	var err error
	if existingVolDisk != "" {
		disk = existingVolDisk
	} else if disk, err = nv.c.makeDisk(src); err != nil {
		errorOut(fmt.Errorf("Build of instance %s aborted: %v", s.ID, err))
		return
	}
	// Commit the disk before booting so deletion can clean it up.
	nv.mu.Lock()
	if s.deleted {
		nv.mu.Unlock()
		if existingVolDisk == "" {
			nv.c.deleteDisk(disk)
		}
		return
	}
	if s.bootVol == "" {
		s.Disk = disk
	} else if !nv.c.volume.attached(s.bootVol, disk, s.bootVolNew) && s.bootVolNew {
		defer nv.c.deleteDisk(disk)
	}
	nv.mu.Unlock()
	spec.Disk = disk
	m, err := nv.c.o.Hypervisor.Boot(spec, func(ps PowerState) { nv.onPower(s, ps) })
	if err != nil {
		errorOut(fmt.Errorf("Build of instance %s aborted: %v", s.ID, err))
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
	nv.maybeHardReset(s)
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
	nv.c.logf("cloud: server %s deleted", s.ID)
}

// serverAction handles POST /servers/{id}/action; nv.mu held.
func (nv *nova) serverAction(w http.ResponseWriter, r *http.Request, s *server, t *token, mv microversion) []func() {
	const svc = SvcCompute
	var body map[string]json.RawMessage
	if err := decodeBody(r, &body); err != nil || len(body) != 1 {
		fail(w, svc, http.StatusBadRequest, "", "Malformed request body")
		return nil
	}
	var action string
	var arg json.RawMessage
	for k, v := range body {
		action, arg = k, v
	}
	conflict := func(what string) {
		state := s.VMState
		if s.TaskState != "" {
			fail(w, svc, http.StatusConflict, "", fmt.Sprintf("Cannot '%s' instance %s while it is in task_state %s", what, s.ID, s.TaskState))
			return
		}
		fail(w, svc, http.StatusConflict, "", fmt.Sprintf("Cannot '%s' instance %s while it is in vm_state %s", what, s.ID, state))
	}
	power := func(what, task, busyStatus string, need string, op func(Machine) error, final func()) {
		if s.Status != need || s.TaskState != "" || s.machine == nil {
			conflict(what)
			return
		}
		s.TaskState = task
		if busyStatus != "" {
			s.Status = busyStatus
		}
		s.Updated = time.Now()
		m := s.machine
		nv.c.goAfter(nv.c.took(nv.c.o.Timing.ServerAction, 0), func() {
			err := op(m)
			nv.mu.Lock()
			defer nv.mu.Unlock()
			if s.deleted {
				return
			}
			s.TaskState, s.Updated = "", time.Now()
			if err != nil {
				nv.c.logf("cloud: %s %s: %v", what, s.ID, err)
				s.Status, s.VMState = "ERROR", "error"
				s.Fault = obj{"code": 500, "message": err.Error(), "created": tsZ(time.Now())}
				return
			}
			final()
		})
		w.WriteHeader(http.StatusAccepted)
	}
	switch action {
	case "os-stop":
		power("stop", "powering-off", "", "ACTIVE", func(m Machine) error { return m.Stop(context.Background()) }, func() {
			s.Status, s.VMState, s.Power = "SHUTOFF", "stopped", novaPowerShutdown
			nv.c.states.note("server", s.ID, "SHUTOFF")
		})
	case "os-start":
		power("start", "powering-on", "", "SHUTOFF", func(m Machine) error { return m.Start(context.Background()) }, func() {
			s.Status, s.VMState, s.Power = "ACTIVE", "active", novaPowerRunning
		})
	case "reboot":
		var a struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(arg, &a) // a bad body leaves Type empty: refused below
		hard := strings.EqualFold(a.Type, "HARD")
		if !hard && !strings.EqualFold(a.Type, "SOFT") {
			fail(w, svc, http.StatusBadRequest, "", "Invalid input for field/attribute type.")
			return nil
		}
		need, status, task := "ACTIVE", "REBOOT", "reboot_started"
		if hard {
			status, task = "HARD_REBOOT", "reboot_started_hard"
			if s.Status == "SHUTOFF" {
				need = "SHUTOFF"
			}
		}
		power("reboot", task, status, need, func(m Machine) error { return m.Reboot(context.Background(), hard) }, func() {
			s.Status, s.VMState, s.Power = "ACTIVE", "active", novaPowerRunning
		})
	case "forceDelete":
		nv.deleteServer(s)
		w.WriteHeader(http.StatusAccepted)
	case "os-getConsoleOutput":
		var a struct {
			Length any `json:"length"`
		}
		_ = json.Unmarshal(arg, &a) // optional: Nova ignores a bad length too
		if s.machine == nil {
			conflict("get console output")
			return nil
		}
		m := s.machine
		// ConsoleLog may take a moment; compute it unlocked.
		nv.mu.Unlock()
		out := m.ConsoleLog()
		nv.mu.Lock()
		if n, ok := anyInt(a.Length); ok && n >= 0 {
			lines := strings.SplitAfter(out, "\n")
			if len(lines) > 0 && lines[len(lines)-1] == "" {
				lines = lines[:len(lines)-1]
			}
			if len(lines) > n {
				lines = lines[len(lines)-n:]
			}
			out = strings.Join(lines, "")
		}
		writeJSON(w, http.StatusOK, obj{"output": out})
	case "createImage":
		var a struct {
			Name     string            `json:"name"`
			Metadata map[string]string `json:"metadata"`
		}
		if err := json.Unmarshal(arg, &a); err != nil || strings.TrimSpace(a.Name) == "" {
			fail(w, svc, http.StatusBadRequest, "", "Invalid input for field/attribute name.")
			return nil
		}
		if (s.Status != "ACTIVE" && s.Status != "SHUTOFF") || s.TaskState != "" {
			conflict("createImage")
			return nil
		}
		img, e := nv.snapshotServer(s, a.Name, a.Metadata, t)
		if e != nil {
			fail(w, svc, e.status, "", e.msg)
			return nil
		}
		w.Header().Set("Location", nv.c.url+"/image/v2/images/"+img.ID)
		if mv.atLeast(45) {
			writeJSON(w, http.StatusAccepted, obj{"image_id": img.ID})
		} else {
			w.WriteHeader(http.StatusAccepted)
		}
	default:
		fail(w, svc, http.StatusBadRequest, "", "There is no such action: "+action)
	}
	return nil
}

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
	for k, v := range meta {
		props[k] = v
	}
	props["image_type"] = "snapshot"
	props["instance_uuid"] = s.ID
	props["user_id"] = t.user.ID
	props["owner_user_name"] = t.user.Name
	props["owner_project_name"] = t.project.Name
	props["base_image_ref"] = s.ImageID
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
		md := &Metadata{UUID: s.ID, Name: s.Name, Hostname: hostname(s.Name), Meta: map[string]string{}, PublicKeys: map[string]string{}, ConfigDrive: s.ConfigDrive}
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
