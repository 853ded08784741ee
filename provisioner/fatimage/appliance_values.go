package fatimage

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/internal/packagesets"
)

// The built-in groups' values from the site's appliance (issue #25):
// package_sets.yaml names the appliance variable each value comes from;
// the step `appliance` resolves them all once on the build VM with the
// site's Ansible, and the run's plan is made from what they resolved to.
// Without a site, the values transcribed from appliance commit f49fc24
// are the plan's.

// fallbackCommit is the appliance commit the built-in values come from.
const fallbackCommit = "f49fc24"

// fallbackWarning is said when a build uses the built-in values.
const fallbackWarning = "no appliance_environment: the built-in groups use the values of appliance commit " +
	fallbackCommit + ", not the site's (set appliance_dir and appliance_environment to read them from the site's appliance)"

// applianceValues is what one resolution on the build VM gave.
type applianceValues struct {
	commit, environment string
	took                time.Duration
	// groups are the build host's groups (group_names).
	groups []string
	// native are the built-in groups doing steps fatimage.yml runs for the
	// build host whatever its groups (the rebuild role's install): the
	// appliance would run them, so the build installs them natively.
	native []string
	// proxy is the site's proxy for the build host; nil without one.
	proxy *buildProxy
	look  packagesets.Lookup
	// repoFiles are the .repo files of the vendor repositories the
	// groups take from the appliance (cuda_repo_url), by URL, as fetched.
	repoFiles map[string]string
	// loginUser is the user the site's Ansible logs in as, its
	// ansible_user ("" unknown): the roles' own default podman user,
	// which the image has (the base image's cloud user).
	loginUser string
}

// applianceRequest asks for every variable and condition the built-in
// groups name, by role scope, and for the local users.
func applianceRequest() appliance.Request {
	type scope struct{ vars, conds, files, texts []string }
	repos := packagesets.ApplianceExtraRepos()
	byRole := map[string]*scope{"": {vars: []string{packagesets.ApplianceLocalUsers().Var, repos.Var, repos.ContentURL, factVersion, factMajor, oodAppsVar,
		selinuxStateVar, selinuxPolicyVar}},
		proxyScope: {vars: slices.Clone(proxyVars)}}
	for _, b := range packagesets.ApplianceBinaryVars() {
		byRole[""].vars = append(byRole[""].vars, b.VersionVar)
		if b.ChecksumVar != "" {
			byRole[""].vars = append(byRole[""].vars, b.ChecksumVar)
		}
	}
	add := func(role, v, cond string, text bool) {
		sc := byRole[role]
		if sc == nil {
			sc = &scope{}
			byRole[role] = sc
		}
		list := &sc.vars
		if text {
			list = &sc.texts
		}
		if v != "" && !slices.Contains(*list, v) {
			*list = append(*list, v)
		}
		if cond != "" && !slices.Contains(sc.conds, cond) {
			sc.conds = append(sc.conds, cond)
		}
	}
	var tasks []appliance.TaskRef
	for _, srcs := range packagesets.ApplianceVars() {
		for _, s := range srcs {
			if ref := (appliance.TaskRef{Role: s.Role, File: s.Task}); s.Task != "" && !slices.Contains(tasks, ref) {
				tasks = append(tasks, ref)
			}
			add(s.Role, s.Var, s.When, s.Text)
			for _, f := range s.VarsFiles {
				if sc := byRole[s.Role]; !slices.Contains(sc.files, f) {
					sc.files = append(sc.files, f)
				}
			}
		}
	}
	for _, repos := range packagesets.ApplianceRepos() {
		for _, r := range repos {
			add(r.Role, r.Var, "", false)
		}
	}
	pu := packagesets.AppliancePodmanUsers()
	add(pu.Role, pu.Var, "", false)
	req := appliance.Request{Tasks: slices.SortedFunc(slices.Values(tasks), func(a, b appliance.TaskRef) int { return strings.Compare(a.String(), b.String()) })}
	for _, role := range slices.Sorted(maps.Keys(byRole)) {
		sc := byRole[role]
		slices.Sort(sc.vars)
		slices.Sort(sc.conds)
		slices.Sort(sc.texts)
		req.Queries = append(req.Queries, appliance.Query{Role: role, Vars: sc.vars, Conditions: sc.conds, VarsFiles: sc.files, Texts: sc.texts})
	}
	return req
}

// resultLookup answers the groups' questions from a resolution.
type resultLookup struct {
	res *appliance.Result
	// buildHost is the build VM's address, left out of the cvmfs
	// client's proxies ("" unknown: nothing is).
	buildHost string
}

// value is a variable's resolved value, as the image is to have it.
func (l resultLookup) value(role, name string) (appliance.Value, bool) {
	v, ok := l.res.Values[role][name]
	if ok && role == cvmfsScope && name == cvmfsVar {
		v = withoutBuildProxy(v, l.buildHost)
	}
	return v, ok
}

func (l resultLookup) Value(role, name string) (any, bool, error) {
	if err := l.res.RoleMissing(role); err != nil {
		return nil, false, err
	}
	v, ok := l.value(role, name)
	if !ok {
		return nil, false, fmt.Errorf("%s was not asked for", name)
	}
	if v.Error != "" {
		return nil, true, fmt.Errorf("the site's Ansible could not template it: %s", v.Error)
	}
	return v.Value, v.Defined, nil
}

func (l resultLookup) Text(role, name string) (string, bool, error) {
	if err := l.res.RoleMissing(role); err != nil {
		return "", false, err
	}
	v, ok := l.res.Texts[role][name]
	if !ok {
		return "", false, fmt.Errorf("%s was not asked for as text", name)
	}
	if v.Error != "" {
		return "", true, fmt.Errorf("the site's Ansible could not template it: %s", v.Error)
	}
	text, isText := v.Value.(string)
	if v.Defined && !isText {
		return "", true, fmt.Errorf("the site's Ansible printed %v, not text", v.Value)
	}
	return text, v.Defined, nil
}

func (l resultLookup) TaskPackages(role, file string) ([][]string, error) {
	if err := l.res.RoleMissing(role); err != nil {
		return nil, err
	}
	tp, ok := l.res.Tasks[appliance.TaskRef{Role: role, File: file}]
	if !ok {
		return nil, fmt.Errorf("task file %s/tasks/%s was not asked for", role, file)
	}
	if tp.Error != "" {
		return nil, fmt.Errorf("%s: %s", tp.Path, tp.Error)
	}
	return tp.Lists, nil
}

func (l resultLookup) Keys(role, name string) []string {
	v, _ := l.value(role, name)
	return v.Keys
}

func (l resultLookup) Holds(role, cond string) (bool, error) {
	if err := l.res.RoleMissing(role); err != nil {
		return false, err
	}
	t, ok := l.res.RoleConditions[role][cond]
	if !ok {
		return false, fmt.Errorf("condition %q was not asked for", cond)
	}
	if t.Error != "" {
		return false, fmt.Errorf("the site's Ansible could not evaluate %q: %s", cond, t.Error)
	}
	return t.Holds, nil
}

// newApplianceValues keeps what the plan needs of a resolution.
func newApplianceValues(res *appliance.Result, buildHost string) *applianceValues {
	return &applianceValues{commit: res.Commit, environment: res.Environment, took: res.Duration,
		groups: res.Groups, look: resultLookup{res: res, buildHost: buildHost}}
}

// applyAppliance gives the groups their values from the appliance,
// recording each value's origin in applied.
func (av *applianceValues) apply(groups []packagesets.Group) ([]packagesets.Group, []packagesets.Applied, []error) {
	var out []packagesets.Group
	var applied []packagesets.Applied
	var errs []error
	whole := map[string][]string{}
	for _, g := range groups {
		if len(g.Appliance) == 0 {
			// a with_option or with_group set, after its group
			g = g.Without(whole[g.Name])
		} else {
			whole[g.Name] = g.WholeLists()
		}
		ng, a, err := packagesets.WithAppliance(g, av.look)
		if err != nil {
			errs = append(errs, fmt.Errorf("the site's appliance: %w", err))
		}
		out = append(out, ng)
		applied = append(applied, a...)
	}
	return out, applied, errs
}

// binary is the built-in binary name at the version the site's appliance
// pins, with the sha256 it pins for it: without one, another version than
// the built-in has none (the template's `binaries` entry must give it, or
// validation says so).
func (av *applianceValues) binary(name string) (Binary, []packagesets.Applied, error) {
	b := builtinBinary(name)
	src, ok := packagesets.ApplianceBinaryVars()[name]
	if !ok {
		return b, nil, nil
	}
	version, defined, err := av.single(src.VersionVar)
	if err != nil || !defined {
		return b, nil, fmt.Errorf("the site's appliance: binary %s: %s: %v", name, src.VersionVar, orUndefined(err))
	}
	if version != b.Version {
		b.Version, b.SHA256 = version, ""
	}
	applied := []packagesets.Applied{{Group: "binaries", ApplianceVar: packagesets.ApplianceVar{Into: "binaries/" + name, Var: src.VersionVar}, Values: []string{version}}}
	if src.ChecksumVar == "" {
		return b, applied, nil
	}
	sum, defined, err := av.single(src.ChecksumVar)
	if err != nil {
		return b, nil, fmt.Errorf("the site's appliance: binary %s: %s: %v", name, src.ChecksumVar, err)
	}
	if defined { // an appliance older than its checksum variables has none
		b.SHA256 = strings.TrimPrefix(sum, "sha256:")
		applied = append(applied, packagesets.Applied{Group: "binaries", ApplianceVar: packagesets.ApplianceVar{Into: "binaries/" + name + "/sha256", Var: src.ChecksumVar}, Values: []string{b.SHA256}})
	}
	return b, applied, nil
}

// single is a variable of no role's scope that holds one string.
func (av *applianceValues) single(name string) (string, bool, error) {
	val, defined, err := av.look.Value("", name)
	if err != nil || !defined {
		return "", defined, err
	}
	vs, err := packagesets.Strings(val)
	if err != nil || len(vs) != 1 {
		return "", true, fmt.Errorf("not a single value (%v)", val)
	}
	return vs[0], true, nil
}

// localUsers are the users of the appliance's appliances_local_users the
// build creates: the enabled entries but the login user's (its home is
// move_login_home's), each as a User.
func (av *applianceValues) localUsers() ([]User, error) {
	return av.siteUsers(packagesets.ApplianceLocalUsers(), localUser)
}

// podmanUsers are the users the appliance's podman role makes for a
// host in podman: each podman_users entry is the user module's
// arguments. After the local users, as bootstrap.yml runs the role after
// adding them: an entry of the same name is the one the image gets.
func (av *applianceValues) podmanUsers() ([]User, error) {
	return av.siteUsers(packagesets.AppliancePodmanUsers(), podmanUser)
}

// siteUsers are the users of src's variable, each entry made by entry
// (skip: not made). A built-in user of the same name and uid keeps its
// built-in definition (its home creation decided as the appliance's
// user module does it).
func (av *applianceValues) siteUsers(src packagesets.LocalUsers, entry func(any) (User, bool, error)) ([]User, error) {
	v, defined, err := av.look.Value(src.Role, src.Var)
	if err != nil || !defined {
		return nil, fmt.Errorf("the site's appliance: %s: %v", src.Var, orUndefined(err))
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("the site's appliance: %s: not a list", src.Var)
	}
	var out []User
	for i, e := range list {
		u, skip, err := entry(e)
		if err != nil {
			return nil, fmt.Errorf("the site's appliance: %s[%d]: %v", src.Var, i, err)
		}
		if !skip {
			out = append(out, builtinIfSame(u))
		}
	}
	return out, nil
}

// builtinIfSame is the built-in user of u's name, uid and groups, else
// u: a site's entry giving the user another group, or its group another
// role, is made as the entry says.
func builtinIfSame(u User) User {
	if b, ok := packagesets.LookupUser(u.Name); ok && b.UID == u.UID && b.Group == u.Group && b.GID == u.GID &&
		User(b).primaryGroup() == u.primaryGroup() {
		return User(b)
	}
	return u
}

func orUndefined(err error) error {
	if err == nil {
		return fmt.Errorf("not defined")
	}
	return err
}

// imageAppliance is image.json's record of where the groups' values came
// from: the site's appliance (its commit and environment, what each
// variable gave) or the built-in values of appliance commit f49fc24.
type imageAppliance struct {
	// Values is "site" or "built-in".
	Values          string                `json:"values"`
	Commit          string                `json:"commit"`
	Environment     string                `json:"environment,omitempty"`
	ResolvedSeconds float64               `json:"resolved_seconds,omitempty"`
	FromAppliance   []imageApplianceValue `json:"from_appliance,omitempty"`
	// Native and Ansible are the steps of the site's fatimage.yml the
	// build host ran: done by the plugin, or run through Ansible.
	Native  []applianceEntry `json:"native,omitempty"`
	Ansible []applianceEntry `json:"ansible,omitempty"`
}

// imageApplianceValue is one value from the appliance: the group, where
// it went, the variable (or condition) and what it gave.
type imageApplianceValue struct {
	Group    string `json:"group"`
	Into     string `json:"into"`
	Variable string `json:"variable,omitempty"`
	Role     string `json:"role,omitempty"`
	// Task is the role's task file the values are written in.
	Task   string   `json:"task,omitempty"`
	When   string   `json:"when,omitempty"`
	Values []string `json:"values"`
}

// applianceRecord is the plan's imageAppliance; nil without groups.
func (p *plan) applianceRecord() *imageAppliance {
	if p.appliance == nil {
		if len(p.sets.groups) == 0 {
			return nil
		}
		return &imageAppliance{Values: "built-in", Commit: fallbackCommit}
	}
	r := &imageAppliance{Values: "site", Commit: p.appliance.commit, Environment: p.appliance.environment,
		ResolvedSeconds: p.appliance.took.Round(100 * time.Millisecond).Seconds()}
	if len(p.extraRepos) > 0 {
		r.FromAppliance = append(r.FromAppliance, imageApplianceValue{Group: "dnf_repos", Into: "repos",
			Variable: packagesets.ApplianceExtraRepos().Var, Values: p.extraRepos})
	}
	r.FromAppliance = append(r.FromAppliance, p.selinux.record()...)
	for _, a := range p.sets.applied {
		r.FromAppliance = append(r.FromAppliance, imageApplianceValue{Group: a.Group, Into: a.Into, Variable: a.Var,
			Role: a.Role, Task: a.Task, When: a.When, Values: append([]string{}, a.Values...)})
	}
	return r
}
