package cloud

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// quotas is one service's per-project limits: the service's defaults and
// what an admin set for a project. The owning service's lock guards it.
// -1 is unlimited, as in Nova and Neutron.
type quotas struct {
	defaults map[string]int
	set      map[string]map[string]int // project id -> resource -> limit
}

func newQuotas(defaults map[string]int) quotas {
	return quotas{defaults: defaults, set: map[string]map[string]int{}}
}

func (q *quotas) limit(project, res string) int {
	if v, ok := q.set[project][res]; ok {
		return v
	}
	return q.defaults[res]
}

// of is the project's full set (defaults where nothing is set).
func (q *quotas) of(project string) map[string]int {
	out := map[string]int{}
	for k := range q.defaults {
		out[k] = q.limit(project, k)
	}
	return out
}

func (q *quotas) update(project string, vals map[string]int) {
	if q.set[project] == nil {
		q.set[project] = map[string]int{}
	}
	for k, v := range vals {
		q.set[project][k] = v
	}
}

// reset drops what was set for project; it says whether anything was.
func (q *quotas) reset(project string) bool {
	_, ok := q.set[project]
	delete(q.set, project)
	return ok
}

// over is the resources (sorted) whose limit used+req exceeds.
func (q *quotas) over(project string, used, req map[string]int) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(req)) {
		if l := q.limit(project, k); l >= 0 && used[k]+req[k] > l {
			out = append(out, k)
		}
	}
	return out
}

// quotaValue reads a limit as the services do: an integer (also as a
// numeric string) of at least -1.
func quotaValue(v any) (int, bool) {
	n, ok := anyInt(v)
	if f, isFloat := v.(json.Number); isFloat && strings.ContainsAny(string(f), ".eE") {
		ok = false
	}
	return n, ok
}

// ---- Nova: /os-quota-sets/{project_id}[/defaults] ----

var novaQuotaDefaults = map[string]int{
	"cores": 20, "fixed_ips": -1, "floating_ips": -1, "injected_file_content_bytes": 10240,
	"injected_file_path_bytes": 255, "injected_files": 5, "instances": 10, "key_pairs": 100,
	"metadata_items": 128, "ram": 51200, "security_group_rules": -1, "security_groups": -1,
	"server_group_members": 10, "server_groups": 10,
}

// novaQuotaShown says whether microversion mv has resource k: 2.36 dropped
// the network proxies, 2.57 the injected files.
func novaQuotaShown(k string, mv microversion) bool {
	switch k {
	case "fixed_ips", "floating_ips", "security_group_rules", "security_groups":
		return !mv.atLeast(36)
	case "injected_file_content_bytes", "injected_file_path_bytes", "injected_files":
		return !mv.atLeast(57)
	}
	return true
}

// novaQuotaJSON is a quota_set; GET names the project (id), PUT does not.
func novaQuotaJSON(set map[string]int, mv microversion, id string) obj {
	out := obj{}
	if id != "" {
		out["id"] = id
	}
	for k, v := range set {
		if novaQuotaShown(k, mv) {
			out[k] = v
		}
	}
	return out
}

// usage is what project's servers use of instances, cores and ram; a
// deleting server counts until it is gone, as in Nova. nv.mu held.
func (nv *nova) usage(project string) map[string]int {
	u := map[string]int{"instances": 0, "cores": 0, "ram": 0}
	for _, s := range nv.servers {
		if s.ProjectID == project {
			u["instances"]++
			if f := nv.flavor(s.FlavorID); f != nil {
				u["cores"] += f.VCPUs
				u["ram"] += f.RAM
			}
		}
	}
	return u
}

// checkServerQuota answers Nova's 403 TooManyInstances when one more
// server of flavor fl would exceed the project's quota; nv.mu held.
func (nv *nova) checkServerQuota(project string, fl *Flavor) *httpErr {
	used := nv.usage(project)
	req := map[string]int{"instances": 1, "cores": fl.VCPUs, "ram": fl.RAM}
	over := nv.quotas.over(project, used, req)
	if len(over) == 0 {
		return nil
	}
	var reqs, useds, allowed []string
	for _, k := range over {
		reqs = append(reqs, fmt.Sprint(req[k]))
		useds = append(useds, fmt.Sprint(used[k]))
		allowed = append(allowed, fmt.Sprint(nv.quotas.limit(project, k)))
	}
	names := strings.Join(over, ", ")
	return &httpErr{status: http.StatusForbidden, msg: fmt.Sprintf("Quota exceeded for %s: Requested %s, but already used %s of %s %s",
		names, strings.Join(reqs, ", "), strings.Join(useds, ", "), strings.Join(allowed, ", "), names)}
}

func (nv *nova) serveQuotaSets(w http.ResponseWriter, r *http.Request, segs []string, t *token, mv microversion) {
	const svc = SvcCompute
	denied := func(rule string) {
		fail(w, svc, http.StatusForbidden, "", "Policy doesn't allow os_compute_api:os-quota-sets:"+rule+" to be performed.")
	}
	if len(segs) == 0 || len(segs) > 2 || (len(segs) == 2 && (segs[1] != "defaults" || r.Method != http.MethodGet)) {
		notFoundPath(w, r, svc)
		return
	}
	project := segs[0]
	nv.mu.Lock()
	defer nv.mu.Unlock()
	if len(segs) == 2 { // defaults: any token may read them
		writeJSON(w, http.StatusOK, obj{"quota_set": novaQuotaJSON(nv.quotas.defaults, mv, project)})
		return
	}
	switch r.Method {
	case http.MethodGet:
		if !t.isAdmin() && project != t.project.ID {
			denied("show")
			return
		}
		writeJSON(w, http.StatusOK, obj{"quota_set": novaQuotaJSON(nv.quotas.of(project), mv, project)})
	case http.MethodPut:
		if !t.isAdmin() {
			denied("update")
			return
		}
		var b struct {
			QuotaSet map[string]any `json:"quota_set"`
		}
		if err := decodeBody(r, &b); err != nil || b.QuotaSet == nil {
			fail(w, svc, http.StatusBadRequest, "", "Invalid input for field/attribute quota_set. Value: None. None is not of type 'object'")
			return
		}
		force := anyBool(b.QuotaSet["force"])
		vals := map[string]int{}
		for _, k := range slices.Sorted(maps.Keys(b.QuotaSet)) {
			if k == "force" {
				continue
			}
			if _, known := nv.quotas.defaults[k]; !known || !novaQuotaShown(k, mv) {
				fail(w, svc, http.StatusBadRequest, "", fmt.Sprintf("Invalid input for field/attribute quota_set. Value: %v. Additional properties are not allowed ('%s' was unexpected)", b.QuotaSet, k))
				return
			}
			n, ok := quotaValue(b.QuotaSet[k])
			if !ok {
				fail(w, svc, http.StatusBadRequest, "", fmt.Sprintf("Invalid input for field/attribute %s. Value: %v. '%v' does not match '^-?[0-9]+$'", k, b.QuotaSet[k], b.QuotaSet[k]))
				return
			}
			if n < -1 {
				fail(w, svc, http.StatusBadRequest, "", fmt.Sprintf("Invalid input for field/attribute %s. Value: %d. %d is less than the minimum of -1", k, n, n))
				return
			}
			vals[k] = n
		}
		if !force {
			used := nv.usage(project)
			for _, k := range slices.Sorted(maps.Keys(used)) {
				if n, ok := vals[k]; ok && n >= 0 && n < used[k] {
					fail(w, svc, http.StatusBadRequest, "", fmt.Sprintf("Quota limit %d for %s must be greater than or equal to already used and reserved %d.", n, k, used[k]))
					return
				}
			}
		}
		nv.quotas.update(project, vals)
		writeJSON(w, http.StatusOK, obj{"quota_set": novaQuotaJSON(nv.quotas.of(project), mv, "")})
	case http.MethodDelete:
		if !t.isAdmin() {
			denied("delete")
			return
		}
		nv.quotas.reset(project)
		w.WriteHeader(http.StatusAccepted)
	default:
		methodNotAllowed(w, svc)
	}
}

// ---- Neutron: /quotas/{project_id}[/default] ----

var neutronQuotaDefaults = map[string]int{
	"network": 100, "subnet": 100, "subnetpool": -1, "port": 500, "router": 10, "floatingip": 50,
	"rbac_policy": 10, "security_group": 10, "security_group_rule": 100,
}

// checkFIPQuota answers Neutron's 409 OverQuota when one more floating IP
// would exceed the project's quota; nt.mu held.
func (nt *neutron) checkFIPQuota(project string) *httpErr {
	used := 0
	for _, f := range nt.fips {
		if f.ProjectID == project {
			used++
		}
	}
	if len(nt.quotas.over(project, map[string]int{"floatingip": used}, map[string]int{"floatingip": 1})) == 0 {
		return nil
	}
	return &httpErr{status: http.StatusConflict, msg: "Quota exceeded for resources: ['floatingip']."}
}

func (nt *neutron) serveQuotas(w http.ResponseWriter, r *http.Request, segs []string, t *token) {
	const svc = SvcNetwork
	denied := func(rule string) {
		fail(w, svc, http.StatusForbidden, "PolicyNotAuthorized", "rule:"+rule+"_quota is disallowed by policy")
	}
	bad := func(msg string) { fail(w, svc, http.StatusBadRequest, "HTTPBadRequest", msg) }
	if len(segs) == 0 || len(segs) > 2 || (len(segs) == 2 && (segs[1] != "default" || r.Method != http.MethodGet)) {
		notFoundPath(w, r, svc)
		return
	}
	project := segs[0]
	nt.mu.Lock()
	defer nt.mu.Unlock()
	switch r.Method {
	case http.MethodGet:
		if !t.isAdmin() && project != t.project.ID {
			denied("get")
			return
		}
		set := nt.quotas.of(project)
		if len(segs) == 2 {
			set = nt.quotas.defaults
		}
		writeJSON(w, http.StatusOK, obj{"quota": set})
	case http.MethodPut:
		if !t.isAdmin() {
			denied("update")
			return
		}
		var b struct {
			Quota map[string]any `json:"quota"`
		}
		if err := decodeBody(r, &b); err != nil || b.Quota == nil {
			bad("Body contains invalid data")
			return
		}
		var unknown []string
		for k := range b.Quota {
			if _, ok := nt.quotas.defaults[k]; !ok {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			slices.Sort(unknown)
			bad("Unrecognized attribute(s) '" + strings.Join(unknown, ", ") + "'")
			return
		}
		vals := map[string]int{}
		for k, v := range b.Quota {
			n, ok := quotaValue(v)
			if !ok {
				bad(fmt.Sprintf("Invalid input for %s. Reason: '%v' is not an integer.", k, v))
				return
			}
			if n < -1 {
				bad(fmt.Sprintf("Invalid input for %s. Reason: '%d' is too small - must be at least '-1'.", k, n))
				return
			}
			vals[k] = n
		}
		nt.quotas.update(project, vals)
		writeJSON(w, http.StatusOK, obj{"quota": nt.quotas.of(project)})
	case http.MethodDelete:
		if !t.isAdmin() {
			denied("delete")
			return
		}
		if !nt.quotas.reset(project) {
			fail(w, svc, http.StatusNotFound, "TenantQuotaNotFound", "Quota for tenant "+project+" could not be found.")
			return
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		methodNotAllowed(w, svc)
	}
}
