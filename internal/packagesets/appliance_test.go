package packagesets

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

type fakeLookup struct {
	vals  map[string]any
	holds map[string]bool
	// tasks are task files' package lists by role/file
	tasks map[string][][]string
}

func (f fakeLookup) TaskPackages(role, file string) ([][]string, error) {
	lists, ok := f.tasks[role+"/"+file]
	if !ok {
		return nil, errors.New("no such task file")
	}
	return lists, nil
}

func (f fakeLookup) Value(role, name string) (any, bool, error) {
	v, ok := f.vals[role+"/"+name]
	if s, isErr := v.(error); isErr {
		return nil, true, s
	}
	return v, ok, nil
}

func (f fakeLookup) Holds(role, cond string) (bool, error) { return f.holds[role+"/"+cond], nil }

// Text is the value as the site's Ansible would print it: tests give it
// as a string.
func (f fakeLookup) Text(role, name string) (string, bool, error) {
	v, ok, err := f.Value(role, name)
	if err != nil || !ok {
		return "", ok, err
	}
	return fmt.Sprint(v), true, nil
}

func (f fakeLookup) Keys(role, name string) []string {
	keys, _ := f.vals[role+"/"+name+" keys"].([]string)
	return keys
}

// TestKeyValueRender: a render key_value source is the mapping's
// key=value lines in the order the site's Ansible gives, the values as
// Jinja prints them, into the one value of a content file.
func TestKeyValueRender(t *testing.T) {
	groups, err := Expand("eessi")
	if err != nil || len(groups) != 1 {
		t.Fatal(groups, err)
	}
	g := groups[0]
	look := fakeLookup{vals: map[string]any{
		"eessi/cvmfs_config":      map[string]any{"CVMFS_QUOTA_LIMIT": "20000", "CVMFS_CLIENT_PROFILE": "single", "CVMFS_USE_GEOAPI": true, "N": float64(3)},
		"eessi/cvmfs_config keys": []string{"CVMFS_CLIENT_PROFILE", "CVMFS_QUOTA_LIMIT", "CVMFS_USE_GEOAPI", "N"},
	}}
	out, applied, err := WithAppliance(g, look)
	if err != nil {
		t.Fatal(err)
	}
	want := "CVMFS_CLIENT_PROFILE=single\nCVMFS_QUOTA_LIMIT=20000\nCVMFS_USE_GEOAPI=True\nN=3\n"
	file := out.Content["files"].([]any)[0].(map[string]any)
	if file["content"] != want || file["destination"] != "/etc/cvmfs/default.local" {
		t.Errorf("default.local: %+v, want content %q", file, want)
	}
	if len(applied) != 1 || applied[0].Var != "cvmfs_config" || applied[0].Role != "eessi" {
		t.Errorf("applied: %+v", applied)
	}
	if builtin := g.Content["files"].([]any)[0].(map[string]any)["content"]; builtin != "CVMFS_CLIENT_PROFILE=single\nCVMFS_QUOTA_LIMIT=10000\n" {
		t.Errorf("the built-in (f49fc24) content changed: %q", builtin)
	}
	for name, vals := range map[string]map[string]any{
		"no order":   {"eessi/cvmfs_config": map[string]any{"A": "1"}},
		"nested":     {"eessi/cvmfs_config": map[string]any{"A": []any{"x"}}, "eessi/cvmfs_config keys": []string{"A"}},
		"no mapping": {"eessi/cvmfs_config": "A=1"},
	} {
		if _, _, err := WithAppliance(g, fakeLookup{vals: vals}); err == nil || !strings.Contains(err.Error(), `group "eessi": cvmfs_config (role eessi)`) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestSplice(t *testing.T) {
	for _, tc := range []struct {
		list, items, vals, want []string
	}{
		{[]string{"a", "b", "c"}, []string{"b"}, []string{"x", "y"}, []string{"a", "x", "y", "c"}},
		{[]string{"a", "b", "c"}, nil, []string{"x"}, []string{"x"}},
		{[]string{"a", "b", "c"}, []string{}, []string{"x"}, []string{"a", "b", "c", "x"}},
		{[]string{"a", "b", "c"}, []string{"c", "a"}, nil, []string{"b"}},
		{[]string{"a"}, []string{"z"}, []string{"x"}, []string{"a", "x"}},
	} {
		if got := splice(tc.list, tc.items, tc.vals); !slices.Equal(got, tc.want) {
			t.Errorf("splice(%v, %v, %v) = %v, want %v", tc.list, tc.items, tc.vals, got, tc.want)
		}
	}
}

// TestWithAppliance: every built-in group with sources takes the
// appliance's values into the named list, leaves the table untouched,
// and formats and drops empty items as Ansible's select does.
func TestWithAppliance(t *testing.T) {
	look := fakeLookup{vals: map[string]any{
		"/kernel_modules_denylist":             []any{"sctp", "dccp"},
		"/grafana_version":                     "10.4.19",
		"/grafana_plugins":                     []any{"grafana-opensearch-datasource 2.9.0", "grafana-piechart-panel 1.6.4"},
		"/ondemand_package":                    "ondemand-4.1.5",
		"/openhpc_packages":                    []any{"podman", "", "slurm-sview-ohpc"},
		"osc.ood/ondemand_dex_package":         "ondemand-dex",
		"osc.ood/additional_rpm_installs":      []any{"lua-posix", "@nodejs:20", "@ruby:3.3"},
		"/grafana_dashboards":                  grafanaDashboardsStock(),
		"/openondemand_install_app_rstudio":    map[string]any{"rstudio": map[string]any{"repo": "x", "version": "2026.01.1"}},
		"/openondemand_install_app_codeserver": map[string]any{"codeserver": map[string]any{"version": "2025.09.1"}},
		"/openondemand_install_app_jupyter":    map[string]any{"jupyter": map[string]any{"version": "main"}},
	}, holds: map[string]bool{"osc.ood/install_ondemand_dex | bool": true,
		"/'jupyter' in ood_install_apps": true, "/'rstudio' in ood_install_apps": true, "/'codeserver' in ood_install_apps": true}}
	groups, err := Expand("kernel_modules", "grafana", "openondemand", "openhpc")
	if err != nil {
		t.Fatal(err)
	}
	var got []Group
	for _, g := range groups {
		ng, applied, err := WithAppliance(g, look)
		if err != nil {
			t.Fatal(err)
		}
		if len(applied) == 0 {
			t.Errorf("group %s: nothing applied", g.Name)
		}
		got = append(got, ng)
	}
	// osc.ood's additional_rpm_installs (a site's nodejs_version 20) in
	// place of the built-in streams
	if p := got[2].Packages; !slices.Equal(p[:3], []string{"lua-posix", "@nodejs:20", "@ruby:3.3"}) || slices.Contains(p, "@nodejs:22/common") || slices.Contains(p, "@ruby:3.3/common") {
		t.Errorf("openondemand's streams: %v", p)
	}
	mods := got[0].Content["modprobe_blacklist"].([]any)[0].(map[string]any)["modules"]
	if !slices.Equal(mods.([]any), []any{"sctp", "dccp"}) {
		t.Errorf("modules %v", mods)
	}
	orig := builtin().Groups["kernel_modules"].Content["modprobe_blacklist"].([]any)[0].(map[string]any)["modules"].([]any)
	if len(orig) != 6 {
		t.Errorf("the table changed: %v", orig)
	}
	if !slices.Contains(got[1].Packages, "grafana-10.4.19") || slices.Contains(got[1].Packages, "grafana-10.4.18") {
		t.Errorf("grafana %v", got[1].Packages)
	}
	if !slices.Equal(got[1].GrafanaPlugins, []string{"grafana-opensearch-datasource 2.9.0", "grafana-piechart-panel 1.6.4"}) ||
		!slices.Equal(builtin().Groups["grafana"].GrafanaPlugins, []string{"grafana-opensearch-datasource 2.8.1"}) {
		t.Errorf("grafana plugins %v (the table's %v)", got[1].GrafanaPlugins, builtin().Groups["grafana"].GrafanaPlugins)
	}
	ood := got[2].Packages
	if !slices.Contains(ood, "ondemand-4.1.5") || !slices.Contains(ood, "ondemand-dex") || slices.Contains(ood, "mod_auth_openidc") ||
		slices.Contains(ood, "certbot") || !slices.Contains(ood, "lua-posix") {
		t.Errorf("openondemand %v", ood)
	}
	apps := got[2].Content["git_checkouts"].([]any)
	if apps[1].(map[string]any)["tag"] != "2026.01.1" || apps[2].(map[string]any)["tag"] != "2025.09.1" || apps[0].(map[string]any)["branch"] != "main" {
		t.Errorf("the apps' tags from openondemand_install_app_*: %v", apps)
	}
	if builtin().Groups["openondemand"].Content["git_checkouts"].([]any)[1].(map[string]any)["tag"] != "2025.08.1" {
		t.Error("the table changed")
	}
	if !slices.Equal(got[3].Packages, []string{"podman", "slurm-sview-ohpc", "mysql"}) {
		t.Errorf("openhpc %v", got[3].Packages)
	}
}

// TestWithApplianceLatest: a site's `latest` for grafana_version or
// ondemand_package is the package's bare name, which the roles install
// with `state: latest`: it joins the group's Latest; a pinned version
// does not.
func TestWithApplianceLatest(t *testing.T) {
	groups, err := Expand("grafana", "openondemand")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		value, want string
		latest      []string
	}{{"latest", "grafana", []string{"grafana"}}, {"10.4.19", "grafana-10.4.19", nil}, {"latest", "ondemand", []string{"ondemand"}}, {"ondemand-4.1.5", "ondemand-4.1.5", nil}} {
		g, v := groups[0], "/grafana_version"
		if strings.HasPrefix(tc.want, "ondemand") {
			g, v = groups[1], "/ondemand_package"
		}
		vals := map[string]any{v: tc.value, "osc.ood/ondemand_dex_package": "ondemand-dex", "/grafana_plugins": []any{}, "/grafana_dashboards": []any{},
			"osc.ood/additional_rpm_installs": []any{"lua-posix"}}
		for _, app := range []string{"rstudio", "codeserver", "jupyter"} {
			vals["/openondemand_install_app_"+app] = map[string]any{app: map[string]any{"version": "v1"}}
		}
		got, _, err := WithAppliance(g, fakeLookup{vals: vals})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(got.Packages, tc.want) || !slices.Equal(got.Latest, tc.latest) {
			t.Errorf("%s %s: packages %v, latest %v; want %s, latest %v", v, tc.value, got.Packages, got.Latest, tc.want, tc.latest)
		}
	}
	if l := builtin().Groups["grafana"].Latest; l != nil {
		t.Errorf("the table changed: latest %v", l)
	}
}

func TestWithApplianceErrors(t *testing.T) {
	g, _ := Expand("grafana")
	_, _, err := WithAppliance(g[0], fakeLookup{})
	if err == nil || !strings.Contains(err.Error(), `group "grafana": grafana_version: not defined`) {
		t.Errorf("undefined: %v", err)
	}
	_, _, err = WithAppliance(g[0], fakeLookup{vals: map[string]any{"/grafana_version": errors.New("vault_x is undefined")}})
	if err == nil || !strings.Contains(err.Error(), "vault_x is undefined") {
		t.Errorf("template error: %v", err)
	}
	_, _, err = WithAppliance(g[0], fakeLookup{vals: map[string]any{"/grafana_version": map[string]any{}}})
	if err == nil || !strings.Contains(err.Error(), "is not a string") {
		t.Errorf("a mapping: %v", err)
	}
	ood, _ := Expand("openondemand")
	_, _, err = WithAppliance(ood[0], fakeLookup{vals: map[string]any{"/ondemand_package": "ondemand-4.1.4", "osc.ood/ondemand_dex_package": "x",
		"/openondemand_install_app_rstudio":    map[string]any{"rstudio": map[string]any{"version": []any{"a", "b"}}},
		"/openondemand_install_app_codeserver": map[string]any{"other": map[string]any{}}}})
	for _, want := range []string{"openondemand_install_app_codeserver.codeserver.version: no codeserver.version in its value",
		"openondemand_install_app_rstudio.rstudio.version: 2 values for the one value of content/git_checkouts/1/tag"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
	}
}

// TestWithApplianceTaskPackages: openondemand_desktop's packages are the
// list of vnc_compute.yml's dnf task as the site's checkout writes it (a
// bumped turbovnc pin, a package added), at the place of the built-in
// ones; a task file with none or two such tasks, or a templated name, is
// an error naming the file's task.
func TestWithApplianceTaskPackages(t *testing.T) {
	g, err := Expand("openondemand_desktop")
	if err != nil || len(g) != 1 {
		t.Fatal(g, err)
	}
	site := [][]string{{"chkconfig"}, {"turbovnc-3.1.4", "nmap-ncat", "python3.9", "dbus-x11", "xterm"}}
	out, applied, err := WithAppliance(g[0], fakeLookup{tasks: map[string][][]string{"openondemand/vnc_compute.yml": site}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"turbovnc-3.1.4", "nmap-ncat", "python3.9", "dbus-x11", "xterm", "@Xfce"}
	if !slices.Equal(out.Packages, want) {
		t.Errorf("packages %v, want %v", out.Packages, want)
	}
	if len(applied) != 2 || !slices.Equal(applied[0].Values, site[1]) || applied[0].Task != "vnc_compute.yml" {
		t.Errorf("applied %+v", applied)
	}
	for _, tc := range []struct {
		lists [][]string
		want  string
	}{
		{[][]string{{"xterm"}}, "0 package tasks name one of dbus-x11, nmap-ncat, python3.9, turbovnc, want one"},
		{[][]string{{"turbovnc-3.0.1"}, {"nmap-ncat"}}, "2 package tasks name one of"},
		{[][]string{{"turbovnc-{{ v }}", "nmap-ncat"}}, `package "turbovnc-{{ v }}" is templated`},
	} {
		_, _, err := WithAppliance(g[0], fakeLookup{tasks: map[string][][]string{"openondemand/vnc_compute.yml": tc.lists}})
		if err == nil || !strings.Contains(err.Error(), `group "openondemand_desktop": the package task of tasks/vnc_compute.yml (role openondemand): `+tc.want) {
			t.Errorf("%v: %v, want %q", tc.lists, err, tc.want)
		}
	}
	if _, _, err := WithAppliance(g[0], fakeLookup{}); err == nil || !strings.Contains(err.Error(), "no such task file") {
		t.Errorf("no task file: %v", err)
	}
	// the screensaver stays out unless the site's
	// openondemand_desktop_screensaver makes the role's removal skip
	tasks := map[string][][]string{"openondemand/vnc_compute.yml": {{"turbovnc-3.0.1"}}}
	for _, holds := range []bool{true, false} {
		out, _, err := WithAppliance(g[0], fakeLookup{tasks: tasks, holds: map[string]bool{"openondemand/not (openondemand_desktop_screensaver | bool)": holds}})
		if err != nil || slices.Contains(out.Remove, "xfce4-screensaver") != holds {
			t.Errorf("removal condition %v: remove %v, %v", holds, out.Remove, err)
		}
	}
}

func TestPackageName(t *testing.T) {
	for spec, want := range map[string]string{"turbovnc-3.0.1": "turbovnc", "turbovnc-3.1.4-20250702": "turbovnc", "dbus-x11": "dbus-x11",
		"python3.9": "python3.9", "nmap-ncat": "nmap-ncat", "ondemand-4.1.4": "ondemand", "a-": "a-", "-1": "-1"} {
		if got := packageName(spec); got != want {
			t.Errorf("packageName(%q) = %q, want %q", spec, got, want)
		}
	}
}

// TestCheckSources: the table's sources are held to a list that exists
// and items that are in it.
func TestCheckSources(t *testing.T) {
	g := Group{Name: "x", Set: Set{Packages: []string{"a"}, Content: map[string]any{"files": []any{}}}}
	for _, tc := range []struct {
		src  ApplianceVar
		want string
	}{
		{ApplianceVar{Into: "packages", Var: "v", Items: []string{"b"}}, `item "b" is not in packages`},
		{ApplianceVar{Into: "services", Var: "v"}, "not packages, no_weak_deps, modules, grafana_plugins, remove nor a content path"},
		{ApplianceVar{Into: "content/files/3/x", Var: "v"}, "not an index"},
		{ApplianceVar{Into: "packages"}, "neither a variable nor a condition"},
		{ApplianceVar{Into: "content/files/0", Drop: true, When: "c"}, "no such element"},
		{ApplianceVar{Into: "content/files", Var: "v", Within: "zz"}, `"zz" is not within content/files`},
		{ApplianceVar{Into: "content/files", Drop: true, Var: "v", When: "c"}, "drop takes a condition and no variable"},
		{ApplianceVar{Into: "content/files", Var: "v", Latest: "a"}, `latest names a package, into "content/files" is not packages`},
		{ApplianceVar{Into: "packages", Task: "t.yml", Items: []string{"a"}}, "a task's packages need its role"},
		{ApplianceVar{Into: "packages", Task: "t.yml", Role: "r", Var: "v", Items: []string{"a"}}, "and no variable"},
		{ApplianceVar{Into: "packages", Task: "t.yml", Role: "r", Items: []string{"b"}}, `item "b" is not in packages`},
	} {
		g.Appliance = []ApplianceVar{tc.src}
		if err := g.checkSources(builtin().Users); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.src, err, tc.want)
		}
	}
}

// TestWithApplianceAppsImagesPins: which Open OnDemand apps, the
// container images' tags (in the units running them too) and the
// slurm-tools venv's pin come from the site's appliance.
func TestWithApplianceAppsImagesPins(t *testing.T) {
	look := fakeLookup{vals: map[string]any{
		"/ondemand_package": "ondemand-4.1.4", "osc.ood/ondemand_dex_package": "ondemand-dex", "osc.ood/additional_rpm_installs": []any{"lua-posix"},
		"/openondemand_install_app_rstudio":    map[string]any{"rstudio": map[string]any{"version": "2025.08.1"}},
		"/openondemand_install_app_codeserver": map[string]any{"codeserver": map[string]any{"version": "2025.09.1"}},
		"/openondemand_install_app_jupyter":    map[string]any{"jupyter": map[string]any{"version": "v1.2"}},
		"mysql/mysql_tag":                      "8.0.31",
		"opensearch/opensearch_version":        "2.11.0",
		"filebeat/filebeat_version":            "7.12.2",
		"slurm_tools/pytools_gitref":           "v2.0",
		"mysql/mysql_podman_user":              "podman",
		"opensearch/opensearch_podman_user":    "podman",
		"filebeat/filebeat_podman_user":        "podman",
		"mysql/mysql_datadir":                  "/var/lib/mysql",
		"opensearch/opensearch_data_path":      "/usr/share/opensearch/data",
		"opensearch/opensearch_config_path":    "/usr/share/opensearch/config",
	}, holds: map[string]bool{"/'jupyter' in ood_install_apps": true, "/'codeserver' in ood_install_apps": true}}
	groups, err := Expand("openondemand", "mysql", "opensearch", "filebeat", "slurm_stats", "rebuild")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Group{}
	var intos []string
	for _, g := range groups {
		ng, applied, err := WithAppliance(g, look)
		if err != nil {
			t.Fatal(err)
		}
		got[g.Name] = ng
		for _, a := range applied {
			if strings.HasPrefix(a.Into, "content/git_checkouts") {
				intos = append(intos, a.Into+" "+a.Var)
			}
		}
	}
	// the sources name the elements where they are once rstudio's is out
	if !slices.Equal(intos, []string{"content/git_checkouts/0/branch openondemand_install_app_jupyter", "content/git_checkouts/1/tag openondemand_install_app_codeserver",
		"content/git_checkouts/0 ", "content/git_checkouts/1 ", "content/git_checkouts/2 "}) {
		t.Errorf("applied %q", intos)
	}
	// rstudio's partition is unset: not installed; jupyter at the site's version
	apps := got["openondemand"].Content["git_checkouts"].([]any)
	if len(apps) != 2 || apps[0].(map[string]any)["branch"] != "v1.2" || !strings.Contains(apps[1].(map[string]any)["repo"].(string), "codeserver") {
		t.Errorf("apps %v", apps)
	}
	for name, want := range map[string]string{"mysql": "/library/mysql:8.0.31", "opensearch": "/opensearchproject/opensearch:2.11.0", "filebeat": "/beats/filebeat-oss:7.12.2"} {
		c := got[name].Content
		img := c["containers"].([]any)[0].(map[string]any)["image"].(string)
		unit := c["systemd_units"].([]any)[0].(map[string]any)["content"].(string)
		if !strings.HasSuffix(img, want) || !strings.Contains(unit, want) {
			t.Errorf("%s: image %s, unit %s, want %s in both", name, img, unit, want)
		}
		if old := builtin().Groups[name].Content["containers"].([]any)[0].(map[string]any)["image"].(string); strings.HasSuffix(old, want) {
			t.Errorf("the table changed: %s", old)
		}
	}
	for _, name := range []string{"slurm_stats", "rebuild"} {
		reqs := got[name].Content["python_envs"].([]any)[0].(map[string]any)["requirements"].([]any)
		if !strings.HasSuffix(reqs[0].(string), "slurm-openstack-tools.git@v2.0") || len(reqs) != 4 {
			t.Errorf("%s: %v", name, reqs)
		}
	}
}

// TestWithAppliancePodmanUser: the user running mysql's, opensearch's
// and filebeat's containers is the site's *_podman_user (read in the
// role's scope): the image's storage and the unit's User, Group and (for
// mysql) the data directory's owner, as the roles' templates write them;
// the stock value (podman) leaves the built-in unit as it is, and a
// variable the site lacks fails once, naming it.
func TestWithAppliancePodmanUser(t *testing.T) {
	wantUser := map[string][]string{
		"mysql":      {"User=ctr\n", "Group=ctr\n", "install -d -o ctr -g ctr -Z", "chown -R ctr:ctr /var/lib/mysql"},
		"opensearch": {"User=ctr\n", "Group=ctr\n"},
		"filebeat":   {"User=ctr\n", "Group=ctr\n"},
	}
	for name, wants := range wantUser {
		groups, err := Expand(name)
		if err != nil || len(groups) != 1 {
			t.Fatal(groups, err)
		}
		g := groups[0]
		vals := map[string]any{"mysql/mysql_tag": "8.0.30", "opensearch/opensearch_version": "2.9.0", "filebeat/filebeat_version": "7.12.1",
			"mysql/mysql_datadir": "/var/lib/mysql", "opensearch/opensearch_data_path": "/usr/share/opensearch/data",
			"opensearch/opensearch_config_path": "/usr/share/opensearch/config"}
		for user, want := range map[string][]string{"podman": nil, "ctr": wants} {
			vals[name+"/"+name+"_podman_user"] = user
			out, applied, err := WithAppliance(g, fakeLookup{vals: vals})
			if err != nil {
				t.Fatal(err)
			}
			ct := out.Content["containers"].([]any)[0].(map[string]any)
			unit := out.Content["systemd_units"].([]any)[0].(map[string]any)["content"].(string)
			builtin := g.Content["systemd_units"].([]any)[0].(map[string]any)["content"].(string)
			if ct["user"] != user {
				t.Errorf("%s with %s: the container's user %v", name, user, ct["user"])
			}
			if want == nil && unit != builtin {
				t.Errorf("%s with the stock podman: the unit differs from the built-in:\n%s", name, unit)
			}
			for _, w := range want {
				if !strings.Contains(unit, w) {
					t.Errorf("%s with %s: the unit lacks %q:\n%s", name, user, w, unit)
				}
			}
			if want != nil && (strings.Contains(unit, "User=podman") || strings.Contains(unit, "podman:podman") || strings.Contains(unit, "-o podman")) {
				t.Errorf("%s with %s: the unit still runs as podman:\n%s", name, user, unit)
			}
			if !slices.ContainsFunc(applied, func(a Applied) bool {
				return a.Var == name+"_podman_user" && a.Role == name && a.Into == "content/containers/0/user" && slices.Equal(a.Values, []string{user})
			}) {
				t.Errorf("%s: applied %+v lacks the container's user", name, applied)
			}
		}
		delete(vals, name+"/"+name+"_podman_user")
		_, _, err = WithAppliance(g, fakeLookup{vals: vals})
		if want := name + "_podman_user (role " + name + "): not defined"; err == nil || strings.Count(err.Error(), want) != 1 {
			t.Errorf("%s without the variable: %v, want %q once", name, err, want)
		}
	}
}

// TestOpenHPCSlurmSetFromEnable: the Slurm set the openhpc group installs
// without weak dependencies is stackhpc.openhpc's ohpc_slurm_packages
// lists that the site's openhpc_enable turns on for the build host, as
// the role's install-ohpc.yml builds it: a host in openhpc alone gets the
// runtime list, a host in control and compute every list; the role's
// empty string for lmod-ohpc (openhpc_module_system_install false) is no
// package.
func TestOpenHPCSlurmSetFromEnable(t *testing.T) {
	groups, err := Expand("openhpc")
	if err != nil {
		t.Fatal(err)
	}
	var g Group
	for _, x := range groups {
		if x.Name == "openhpc" {
			g = x
		}
	}
	slurm := map[string]any{
		"control":  []any{"ohpc-slurm-server", "slurm-slurmctld-ohpc", "slurm-example-configs-ohpc"},
		"batch":    []any{"ohpc-base-compute", "ohpc-slurm-client"},
		"runtime":  []any{"slurm-ohpc", "munge", "slurm-slurmd-ohpc", "slurm-example-configs-ohpc", ""},
		"database": []any{"slurm-slurmdbd-ohpc"},
	}
	vals := map[string]any{"stackhpc.openhpc/ohpc_slurm_packages": slurm, "/openhpc_packages": []any{"nhc-ohpc"}}
	// batch's condition is the role's pre.yml's too: a login-only node
	// (the appliance's login) gets batch's packages
	holds := func(keys ...string) map[string]bool {
		out := map[string]bool{}
		for _, k := range keys {
			cond := "openhpc_enable." + k + " | bool"
			if k == "batch" {
				cond += " or openhpc_login_only_nodes in group_names"
			}
			out["stackhpc.openhpc/"+cond] = true
		}
		return out
	}
	for _, c := range []struct {
		name string
		on   []string
		want []string
	}{
		{"openhpc alone", []string{"runtime"}, []string{"slurm-ohpc", "munge", "slurm-slurmd-ohpc", "slurm-example-configs-ohpc"}},
		{"login (batch from openhpc_login_only_nodes)", []string{"batch", "runtime"}, []string{"ohpc-base-compute", "ohpc-slurm-client",
			"slurm-ohpc", "munge", "slurm-slurmd-ohpc", "slurm-example-configs-ohpc"}},
		{"control and compute", []string{"control", "batch", "runtime", "database"}, []string{"ohpc-slurm-server", "slurm-slurmctld-ohpc",
			"ohpc-base-compute", "ohpc-slurm-client", "slurm-ohpc", "munge", "slurm-slurmd-ohpc", "slurm-example-configs-ohpc", "slurm-slurmdbd-ohpc"}},
	} {
		out, _, err := WithAppliance(g, fakeLookup{vals: vals, holds: holds(c.on...)})
		if err != nil {
			t.Fatal(err)
		}
		// one dnf transaction: the order is not the role's
		if got := slices.Sorted(slices.Values(out.NoWeakDeps)); !slices.Equal(got, slices.Sorted(slices.Values(c.want))) {
			t.Errorf("%s: no_weak_deps %q, want %q", c.name, out.NoWeakDeps, c.want)
		}
	}
	if len(g.NoWeakDeps) != 10 || !slices.Contains(g.NoWeakDeps, "lmod-ohpc") {
		t.Errorf("the built-in (f49fc24) set changed: %q", g.NoWeakDeps)
	}
}

// TestWithApplianceJournald: the drop-in says the site's
// journald_storage, and the journal's directory is made only when it is
// persistent, as the role's when; the stock value is the built-in group.
func TestWithApplianceJournald(t *testing.T) {
	groups, err := Expand("journald")
	if err != nil || len(groups) != 1 {
		t.Fatal(groups, err)
	}
	g := groups[0]
	cond := `journald/journald_storage == "persistent"`
	for storage, tmpfiles := range map[string]int{"persistent": 1, "volatile": 0} {
		out, applied, err := WithAppliance(g, fakeLookup{vals: map[string]any{"journald/journald_storage": storage}, holds: map[string]bool{cond: storage == "persistent"}})
		if err != nil {
			t.Fatal(err)
		}
		conf := out.Content["files"].([]any)[1].(map[string]any)["content"].(string)
		tf, _ := out.Content["tmpfiles"].([]any)
		if !strings.Contains(conf, "\n[Journal]\nStorage="+storage+"\n") || len(tf) != tmpfiles || len(applied) != 2 {
			t.Errorf("journald_storage %s: drop-in %q, tmpfiles %v, applied %+v", storage, conf, tf, applied)
		}
		if storage == "persistent" && !reflect.DeepEqual(out.Content, g.Content) {
			t.Errorf("the stock value changes the group: %v", out.Content)
		}
	}
}

// TestWithApplianceVGPU: mig-parted's RPM is the site's
// vgpu_nvidia_mig_manager_rpm_url; on GitHub, as the role's default, it
// goes through github_releases_url (the stock value is the built-in
// item), and a site's own URL stays as it is.
func TestWithApplianceVGPU(t *testing.T) {
	groups, err := Expand("vgpu")
	if err != nil || len(groups) != 1 {
		t.Fatal(groups, err)
	}
	g := groups[0]
	builtin := g.Content["rpm_urls"].([]any)[0].(map[string]any)["url"]
	for value, want := range map[string]any{
		"https://github.com/NVIDIA/mig-parted/releases/download/v0.12.1/nvidia-mig-manager-0.12.1-1.x86_64.rpm": builtin,
		"https://github.com/NVIDIA/mig-parted/releases/download/v0.13.0/nvidia-mig-manager-0.13.0-1.x86_64.rpm": "{{github_releases_url}}/NVIDIA/mig-parted/releases/download/v0.13.0/nvidia-mig-manager-0.13.0-1.x86_64.rpm",
		"https://mirror.site.example/mig/nvidia-mig-manager-0.13.0-1.x86_64.rpm":                                "https://mirror.site.example/mig/nvidia-mig-manager-0.13.0-1.x86_64.rpm",
	} {
		out, _, err := WithAppliance(g, fakeLookup{vals: map[string]any{"stackhpc.linux.vgpu/vgpu_nvidia_mig_manager_rpm_url": value}})
		if err != nil {
			t.Fatal(err)
		}
		if got := out.Content["rpm_urls"].([]any)[0].(map[string]any)["url"]; got != want {
			t.Errorf("%s: url %v, want %v", value, got, want)
		}
	}
}

// chronyDefaults is mrlesmithjr.chrony's chrony_ntp_servers default as
// the site's Ansible gives it (JSON: numbers as float64).
func chronyDefaults() []any {
	var out []any
	for i := range 4 {
		out = append(out, map[string]any{"server": string(rune('0'+i)) + ".debian.pool.ntp.org",
			"options": []any{map[string]any{"option": "iburst"}, map[string]any{"option": "minpoll", "val": float64(8)}}})
	}
	return out
}

// chronyStock are mrlesmithjr.chrony's defaults as the site's Ansible
// gives them (its scalars as text, as the role's template prints them),
// and whether chrony_rtcsync_enabled holds.
func chronyStock() (map[string]any, map[string]bool) {
	r := "mrlesmithjr.chrony/"
	return map[string]any{r + "chrony_ntp_servers": chronyDefaults(),
			r + "chrony_allow_hosts": []any{"10/8", "192.168/16", "172.16/12"}, r + "chrony_local_stratum": "10",
			r + "chrony_logdir": "/var/log/chrony", r + "chrony_dumpdir": "/var/lib/chrony",
			r + "chrony_log": []any{"tracking", "measurements", "statistics"}, r + "chrony_maxupdateskew": "100.0"},
		map[string]bool{r + "chrony_rtcsync_enabled | bool": true}
}

// TestWithApplianceChrony: chrony.conf is the role's template filled in
// with the site's variables: the time sources as the template writes
// them (type defaulting to server, options with and without a val,
// none), its allow lines, dumpdir, local stratum, log, logdir,
// maxupdateskew as printed (100.0 stays so) and rtcsync only when
// chrony_rtcsync_enabled holds; the role's defaults give the built-in
// file, which is the template's output byte for byte.
func TestWithApplianceChrony(t *testing.T) {
	groups, err := Expand("chrony")
	if err != nil || len(groups) != 1 {
		t.Fatal(groups, err)
	}
	g := groups[0]
	conf := func(g Group) string { return g.Content["files"].([]any)[0].(map[string]any)["content"].(string) }
	if conf(g) != chronyTemplateOutput {
		t.Errorf("built-in chrony.conf:\n%s\nwant the role's template with its defaults:\n%s", conf(g), chronyTemplateOutput)
	}
	stock, holds := chronyStock()
	out, applied, err := WithAppliance(g, fakeLookup{vals: stock, holds: holds})
	if err != nil || len(applied) != 8 {
		t.Fatal(applied, err)
	}
	if !reflect.DeepEqual(out.Content, g.Content) {
		t.Errorf("the role's defaults change the file: %q", conf(out))
	}
	site := maps.Clone(stock)
	site["mrlesmithjr.chrony/chrony_ntp_servers"] = []any{
		map[string]any{"server": "ntp.site.example", "type": "pool", "options": []any{map[string]any{"option": "maxsources", "val": float64(3)}, map[string]any{"option": "iburst"}}},
		map[string]any{"server": "10.0.0.1"},
		map[string]any{"server": "10.0.0.2", "type": "peer", "options": []any{}},
	}
	site["mrlesmithjr.chrony/chrony_allow_hosts"] = []any{"10.60.0.0/16"}
	site["mrlesmithjr.chrony/chrony_local_stratum"] = "8"
	site["mrlesmithjr.chrony/chrony_logdir"] = "/srv/log/chrony"
	site["mrlesmithjr.chrony/chrony_dumpdir"] = "/srv/lib/chrony"
	site["mrlesmithjr.chrony/chrony_log"] = []any{"tracking", "rtc"}
	site["mrlesmithjr.chrony/chrony_maxupdateskew"] = "5.0"
	out, _, err = WithAppliance(g, fakeLookup{vals: site})
	if err != nil {
		t.Fatal(err)
	}
	want := "allow 10.60.0.0/16\ncommandkey 1\ndriftfile /var/lib/chrony/chrony.drift\ndumpdir /srv/lib/chrony\ndumponexit\n" +
		"keyfile /etc/chrony/chrony.keys\nlocal stratum 8\nlog tracking rtc\nlogchange 0.5\nlogdir /srv/log/chrony\nmaxupdateskew 5.0\nrtconutc\n" +
		"pool ntp.site.example maxsources 3 iburst\nserver 10.0.0.1\npeer 10.0.0.2\n"
	if conf(out) != want {
		t.Errorf("chrony.conf from a site's values (rtcsync off):\n%s\nwant\n%s", conf(out), want)
	}
	for name, v := range map[string]any{"not a list": "pool.ntp.org", "no server": []any{map[string]any{"type": "pool"}},
		"option without option": []any{map[string]any{"server": "a", "options": []any{map[string]any{"val": float64(1)}}}}} {
		bad := maps.Clone(stock)
		bad["mrlesmithjr.chrony/chrony_ntp_servers"] = v
		if _, _, err := WithAppliance(g, fakeLookup{vals: bad, holds: holds}); err == nil || !strings.Contains(err.Error(), "chrony_ntp_servers (role mrlesmithjr.chrony)") {
			t.Errorf("%s: %v, want an error naming the variable", name, err)
		}
	}
	delete(stock, "mrlesmithjr.chrony/chrony_maxupdateskew")
	if _, _, err := WithAppliance(g, fakeLookup{vals: stock, holds: holds}); err == nil || !strings.Contains(err.Error(), "chrony_maxupdateskew (role mrlesmithjr.chrony): not defined") {
		t.Errorf("no chrony_maxupdateskew: %v, want an error naming it", err)
	}
}

// chronyTemplateOutput is what mrlesmithjr.chrony's chrony.conf.j2 (v0.1.4)
// writes with the role's defaults, as Ansible 2.14's template module
// rendered it from the appliance checkout's Galaxy roles.
const chronyTemplateOutput = `allow 10/8
allow 192.168/16
allow 172.16/12
commandkey 1
driftfile /var/lib/chrony/chrony.drift
dumpdir /var/lib/chrony
dumponexit
keyfile /etc/chrony/chrony.keys
local stratum 10
log tracking measurements statistics
logchange 0.5
logdir /var/log/chrony
maxupdateskew 100.0
rtconutc
rtcsync
server 0.debian.pool.ntp.org iburst minpoll 8
server 1.debian.pool.ntp.org iburst minpoll 8
server 2.debian.pool.ntp.org iburst minpoll 8
server 3.debian.pool.ntp.org iburst minpoll 8
`

// TestWithApplianceHPL: HPL's URL and destination follow the role's
// hpctests_hpl_version; its sha256 is the plugin's pin for 2.3, and
// another version leaves the item unpinned (Unpinned names it).
func TestWithApplianceHPL(t *testing.T) {
	groups, err := Expand("hpctests")
	if err != nil || len(groups) != 1 {
		t.Fatal(groups, err)
	}
	g := groups[0]
	out, _, err := WithAppliance(g, fakeLookup{vals: map[string]any{"hpctests/hpctests_hpl_version": "2.3"}})
	if err != nil || !reflect.DeepEqual(out.Content, g.Content) || len(out.Unpinned()) != 0 {
		t.Errorf("2.3: %v, %v, unpinned %v", out.Content, err, out.Unpinned())
	}
	out, _, err = WithAppliance(g, fakeLookup{vals: map[string]any{"hpctests/hpctests_hpl_version": float64(2.4)}})
	if err != nil {
		t.Fatal(err)
	}
	d := out.Content["downloads"].([]any)[0].(map[string]any)
	if !strings.HasSuffix(d["url"].(string), "/hpl-2.4.tar.gz") || d["destination"] != "/opt/hpl/hpl-2.4.tar.gz" || d["sha256"] != "" {
		t.Errorf("2.4: %v", d)
	}
	if u := out.Unpinned(); len(u) != 1 || u[0].Option != "downloads" || u[0].Index != 0 || u[0].Source.Var != "hpctests_hpl_version" {
		t.Errorf("2.4 unpinned: %+v", u)
	}
}

// TestWithApplianceAnsibleInitPins: the site's ansible_init_pip_packages
// decide the venv's requirements; a name the plugin pins gets its pin, a
// site's own pin stays, a name without one fails naming the variable.
func TestWithApplianceAnsibleInitPins(t *testing.T) {
	groups, err := Expand("ansible_init")
	if err != nil || len(groups) != 1 {
		t.Fatal(groups, err)
	}
	g := groups[0]
	reqs := func(g Group) []any {
		return g.Content["python_envs"].([]any)[0].(map[string]any)["requirements"].([]any)
	}
	look := func(v ...any) fakeLookup { return fakeLookup{vals: map[string]any{"/ansible_init_pip_packages": v}} }
	out, _, err := WithAppliance(g, look("ansible", "jmespath", "requests", "netaddr"))
	if err != nil || !reflect.DeepEqual(out.Content, g.Content) {
		t.Errorf("the appliance's list: %v, %v, want the built-in pins %v", reqs(out), err, reqs(g))
	}
	out, _, err = WithAppliance(g, look("Ansible", "requests", "PyYAML==6.0.2"))
	if want := []any{"ansible==8.7.0", "requests==2.32.3", "PyYAML==6.0.2"}; err != nil || !reflect.DeepEqual(reqs(out), want) {
		t.Errorf("a site's list: %v, %v, want %v", reqs(out), err, want)
	}
	_, _, err = WithAppliance(g, look("ansible", "pyyaml", "openstacksdk"))
	if err == nil || !strings.Contains(err.Error(), `group "ansible_init": ansible_init_pip_packages: pyyaml, openstacksdk: the plugin pins no version`) {
		t.Errorf("unpinned names: %v", err)
	}
}

// nodeExporterStock are prometheus.prometheus.node_exporter's defaults
// (0.28.0's, the names and values the lab's stand-in has) as the site's
// Ansible gives them.
func nodeExporterStock() map[string]any {
	const role = "prometheus.prometheus.node_exporter/"
	return map[string]any{
		role + "node_exporter_enabled_collectors":  []any{"systemd", map[string]any{"textfile": map[string]any{"directory": "/var/lib/node_exporter"}}},
		role + "node_exporter_disabled_collectors": []any{},
		role + "node_exporter_web_listen_address":  "0.0.0.0:9100",
		role + "node_exporter_web_telemetry_path":  "/metrics",
		role + "node_exporter_textfile_dir":        "/var/lib/node_exporter",
		role + "node_exporter_system_user":         "node-exp",
		role + "node_exporter_system_group":        "node-exp",
		role + "node_exporter_config_dir":          "/etc/node_exporter",
	}
}

// unitExecStart is the ExecStart line of a group's first unit.
func unitExecStart(t *testing.T, g Group) string {
	t.Helper()
	unit := g.Content["systemd_units"].([]any)[0].(map[string]any)["content"].(string)
	for _, line := range strings.Split(unit, "\n") {
		if strings.HasPrefix(line, "ExecStart=") {
			return line
		}
	}
	t.Fatalf("no ExecStart in\n%s", unit)
	return ""
}

// TestWithApplianceNodeExporter: the unit's flags are the site's
// node_exporter variables as the role's template writes them (the
// collectors, an option each in key order, disabled collectors, every
// listen address of a list, the telemetry path), words quoted where
// systemd would split or expand them; the textfile directory is the
// site's; the role's defaults give the built-in unit.
func TestWithApplianceNodeExporter(t *testing.T) {
	groups, err := Expand("node_exporter")
	if err != nil || len(groups) != 1 {
		t.Fatal(groups, err)
	}
	g := groups[0]
	out, applied, err := WithAppliance(g, fakeLookup{vals: nodeExporterStock()})
	if err != nil || len(applied) != 15 || !reflect.DeepEqual(out.Content, g.Content) || out.UserDefs["node-exp"] != mustUser(t, "node-exp") {
		t.Fatalf("the role's defaults: %v, %d applied, %q, want the built-in %q", err, len(applied), unitExecStart(t, out), unitExecStart(t, g))
	}
	const role = "prometheus.prometheus.node_exporter/"
	site := nodeExporterStock()
	site[role+"node_exporter_enabled_collectors"] = []any{"systemd", "processes",
		map[string]any{"textfile": map[string]any{"directory": "/srv/prom text", "b": true, "a": float64(5)}}}
	site[role+"node_exporter_disabled_collectors"] = []any{"mdadm", "nfs"}
	site[role+"node_exporter_web_listen_address"] = []any{"10.0.0.5:9100", "127.0.0.1:9100"}
	site[role+"node_exporter_web_telemetry_path"] = "/m%"
	site[role+"node_exporter_textfile_dir"] = "/srv/prom text"
	out, _, err = WithAppliance(g, fakeLookup{vals: site})
	if err != nil {
		t.Fatal(err)
	}
	want := "ExecStart=/usr/local/bin/node_exporter --collector.systemd --collector.processes --collector.textfile --collector.textfile.a=5 --collector.textfile.b=True " +
		"'--collector.textfile.directory=/srv/prom text' --no-collector.mdadm --no-collector.nfs --web.listen-address=10.0.0.5:9100 --web.listen-address=127.0.0.1:9100 --web.telemetry-path=/m%%"
	if got := unitExecStart(t, out); got != want {
		t.Errorf("a site's values:\n%s\nwant\n%s", got, want)
	}
	if d := out.Content["files"].([]any)[1].(map[string]any)["destination"]; d != "/srv/prom text" {
		t.Errorf("textfile directory %v", d)
	}
	site[role+"node_exporter_enabled_collectors"] = []any{}
	site[role+"node_exporter_disabled_collectors"] = []any{}
	site[role+"node_exporter_web_listen_address"] = ":9100"
	if out, _, err = WithAppliance(g, fakeLookup{vals: site}); err != nil || unitExecStart(t, out) != "ExecStart=/usr/local/bin/node_exporter --web.listen-address=:9100 --web.telemetry-path=/m%%" {
		t.Errorf("no collectors: %v %q", err, unitExecStart(t, out))
	}
	for name, v := range map[string]any{"not a list": "systemd", "two names": []any{map[string]any{"a": map[string]any{}, "b": map[string]any{}}},
		"options not a mapping": []any{map[string]any{"textfile": "x"}}, "a backslash": []any{`a\b`}} {
		bad := nodeExporterStock()
		bad[role+"node_exporter_enabled_collectors"] = v
		if _, _, err := WithAppliance(g, fakeLookup{vals: bad}); err == nil || !strings.Contains(err.Error(), `group "node_exporter": node_exporter_enabled_collectors (role prometheus.prometheus.node_exporter): `) {
			t.Errorf("%s: %v, want an error naming the group and the variable", name, err)
		}
	}
}

// grafanaDashboardsStock is the common group_vars' grafana_dashboards
// (without openondemand) as the site's Ansible gives it.
func grafanaDashboardsStock() []any {
	reps := func(kv ...string) []any {
		var out []any
		for i := 0; i < len(kv); i += 2 {
			out = append(out, map[string]any{"placeholder": kv[i], "replacement": kv[i+1]})
		}
		return out
	}
	return []any{
		map[string]any{"dashboard_id": float64(13427), "revision_id": float64(1), "replacements": reps("DS_PROMETHEUS", "prometheus", "DS_ELASTICSEARCH", "slurmstats")},
		map[string]any{"dashboard_file": "openhpc-slurm.json", "replacements": reps("DS_PROMETHEUS", "prometheus", "DS_SLURMSTATS", "slurmstats")},
		map[string]any{"dashboard_file": "slurm-jobs.json", "replacements": reps("DS_PROMETHEUS", "prometheus", "DS_SLURMSTATS", "slurmstats")},
		map[string]any{"dashboard_id": float64(4323), "revision_id": float64(3), "replacements": reps("DS_PROMETHEUS", "prometheus")},
	}
}

// TestWithApplianceGrafanaDashboards: the site's grafana_dashboards are
// the group's whole list (a grafana.com dashboard by id and revision, a
// file of the role's files/ in the site's checkout, an absolute file as
// it is), standing for the with_option and with_group sets' dashboards
// (WholeLists); the stock list gives the built-in dashboards of the
// group and its appliance_dir set; a bad entry fails naming the variable.
func TestWithApplianceGrafanaDashboards(t *testing.T) {
	groups, err := Resolve([]string{"grafana"}, map[string]bool{"appliance_dir": true})
	if err != nil || len(groups) != 2 {
		t.Fatal(groups, err)
	}
	g := groups[0]
	if w := g.WholeLists(); !slices.Equal(w, []string{"grafana_dashboards"}) {
		t.Fatalf("whole lists %v", w)
	}
	if _, ok := groups[1].Without(g.WholeLists()).Content["grafana_dashboards"]; ok || groups[1].Content["grafana_dashboards"] == nil {
		t.Errorf("the appliance_dir set keeps its dashboards, or the table lost them")
	}
	look := func(v any) fakeLookup {
		return fakeLookup{vals: map[string]any{"/grafana_version": "10.4.18", "/grafana_plugins": []any{}, "/grafana_dashboards": v}}
	}
	out, applied, err := WithAppliance(g, look(grafanaDashboardsStock()))
	if err != nil {
		t.Fatal(err)
	}
	builtin := append(slices.Clone(g.Content["grafana_dashboards"].([]any)), groups[1].Content["grafana_dashboards"].([]any)...)
	got := out.Content["grafana_dashboards"].([]any)
	if len(got) != len(builtin) {
		t.Fatalf("stock: %v, want the built-in %v", got, builtin)
	}
	for _, b := range builtin {
		if !slices.ContainsFunc(got, func(x any) bool { return reflect.DeepEqual(x, b) }) {
			t.Errorf("stock: %v lacks the built-in %v", got, b)
		}
	}
	if i := slices.IndexFunc(applied, func(a Applied) bool { return a.Var == "grafana_dashboards" }); i < 0 || len(applied[i].Values) != 4 {
		t.Errorf("applied %+v", applied)
	}
	site := []any{map[string]any{"dashboard_id": "1860", "revision_id": float64(37)},
		map[string]any{"dashboard_file": "/srv/site/dash.json", "replacements": []any{map[string]any{"placeholder": "DS_X", "replacement": "x"}}}}
	out, _, err = WithAppliance(g, look(site))
	want := []any{map[string]any{"id": 1860, "revision": 37}, map[string]any{"source": "/srv/site/dash.json", "replacements": map[string]any{"DS_X": "x"}}}
	if err != nil || !reflect.DeepEqual(out.Content["grafana_dashboards"], want) {
		t.Errorf("a site's: %v %v, want %v", out.Content["grafana_dashboards"], err, want)
	}
	for name, bad := range map[string]any{"not a list": "x", "no revision": []any{map[string]any{"dashboard_id": float64(1)}},
		"neither": []any{map[string]any{"replacements": []any{}}}, "both": []any{map[string]any{"dashboard_id": float64(1), "revision_id": float64(1), "dashboard_file": "a.json"}},
		"bad replacement": []any{map[string]any{"dashboard_file": "a.json", "replacements": []any{map[string]any{"placeholder": "DS_X"}}}}} {
		if _, _, err := WithAppliance(g, look(bad)); err == nil || !strings.Contains(err.Error(), `group "grafana": grafana_dashboards: `) {
			t.Errorf("%s: %v, want an error naming the variable", name, err)
		}
	}
}

// TestWithApplianceFirewalld: the public zone's file is the site's
// firewalld_configs applied to the OS's zone (the appliance's default
// rule gives the built-in file; permanent services, ports and sources
// enabled or disabled, the target, a runtime rule leaving nothing); no
// rule for the host's groups leaves the OS's zone (no file); a rule the
// plugin does not write fails naming the variable.
func TestWithApplianceFirewalld(t *testing.T) {
	groups, err := Expand("firewalld")
	if err != nil || len(groups) != 1 {
		t.Fatal(groups, err)
	}
	g := groups[0]
	look := func(rules ...any) fakeLookup {
		return fakeLookup{vals: map[string]any{"/firewalld_configs": rules},
			holds: map[string]bool{"/firewalld_configs | length > 0": len(rules) > 0}}
	}
	stock := map[string]any{"zone": "public", "state": "enabled", "target": "ACCEPT", "permanent": true}
	out, _, err := WithAppliance(g, look(stock))
	if err != nil || !reflect.DeepEqual(out.Content, g.Content) {
		t.Fatalf("the appliance's rule: %v\n%v\nwant the built-in\n%v", err, out.Content, g.Content)
	}
	out, _, err = WithAppliance(g, look())
	if files := out.Content["files"].([]any); err != nil || len(files) != 0 {
		t.Errorf("no rule: %v %v, want no file", files, err)
	}
	out, _, err = WithAppliance(g, look(
		map[string]any{"service": "http", "state": "enabled", "permanent": true},
		map[string]any{"port": "8080-8081/tcp", "state": "enabled", "permanent": true, "immediate": true},
		map[string]any{"source": "10.0.0.0/8", "zone": "public", "state": "enabled", "permanent": true},
		map[string]any{"service": "cockpit", "state": "disabled", "permanent": true},
		map[string]any{"service": "nfs", "state": "enabled", "immediate": true},
		map[string]any{"target": "DROP", "state": "enabled", "permanent": true},
	))
	if err != nil {
		t.Fatal(err)
	}
	want := "<zone target=\"DROP\">\n  <short>Public</short>\n  <service name=\"ssh\"/>\n  <service name=\"dhcpv6-client\"/>\n" +
		"  <service name=\"http\"/>\n  <port port=\"8080-8081\" protocol=\"tcp\"/>\n  <source address=\"10.0.0.0/8\"/>\n</zone>\n"
	if got := out.Content["files"].([]any)[0].(map[string]any)["content"].(string); !strings.HasSuffix(got, want) {
		t.Errorf("a site's rules:\n%s\nwant it to end\n%s", got, want)
	}
	for name, bad := range map[string]any{
		"rich rule":     map[string]any{"rich_rule": "rule family=ipv4 accept", "state": "enabled", "permanent": true},
		"another zone":  map[string]any{"zone": "internal", "service": "ssh", "state": "enabled", "permanent": true},
		"state present": map[string]any{"service": "ssh", "state": "present", "permanent": true},
		"a bad port":    map[string]any{"port": "http", "state": "enabled", "permanent": true},
		"nothing":       map[string]any{"state": "enabled", "permanent": true},
	} {
		if _, _, err := WithAppliance(g, look(bad)); err == nil || !strings.Contains(err.Error(), `group "firewalld": firewalld_configs: [0]: `) {
			t.Errorf("%s: %v, want an error naming the variable and the rule", name, err)
		}
	}
}

// TestWithoutAppliance: without a site's appliance, firewalld's public
// zone (firewalld_configs_default's rule, for openhpc hosts) is in a
// build only with openhpc; the group data is left as it is.
func TestWithoutAppliance(t *testing.T) {
	zone := func(names ...string) bool {
		groups, err := Resolve(names, nil)
		if err != nil {
			t.Fatal(err)
		}
		out, err := WithoutAppliance(groups)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range out {
			if fs, _ := g.Content["files"].([]any); g.Name == "firewalld" && len(fs) > 0 {
				return fs[0].(map[string]any)["destination"] == "/etc/firewalld/zones/public.xml"
			}
		}
		return false
	}
	if zone("firewalld") || zone("firewalld", "fail2ban") {
		t.Error("the ACCEPT zone without openhpc")
	}
	// after the calls leaving it out: they left the group data as it was
	if !zone("firewalld", "openhpc") || !zone("openhpc", "firewalld") {
		t.Error("no ACCEPT zone with openhpc")
	}
	bad := Group{Name: "x", Set: Set{Appliance: []ApplianceVar{{Into: "packages", Var: "v", FallbackGroups: []string{"openhpc"}}}}}
	if err := bad.checkSources(builtin().Users); err == nil || !strings.Contains(err.Error(), "fallback groups are a drop's") {
		t.Errorf("fallback groups on a value source: %v", err)
	}
}

func mustGroup(t *testing.T, name string) Group {
	t.Helper()
	groups, err := Expand(name)
	if err != nil || len(groups) != 1 {
		t.Fatal(groups, err)
	}
	return groups[0]
}

func mustUser(t *testing.T, name string) User {
	t.Helper()
	u, ok := LookupUser(name)
	if !ok {
		t.Fatalf("no built-in user %s", name)
	}
	return u
}

// TestWithApplianceNodeExporterUser: the site's node_exporter_system_user,
// _group and _config_dir name the role's user (which keeps the plugin's
// fixed ids), its home, the unit's User and Group and the directories'
// owner; a name useradd would refuse is an error naming the variable.
func TestWithApplianceNodeExporterUser(t *testing.T) {
	g := mustGroup(t, "node_exporter")
	const role = "prometheus.prometheus.node_exporter/"
	site := nodeExporterStock()
	site[role+"node_exporter_system_user"] = "prom-node"
	site[role+"node_exporter_system_group"] = "monitoring"
	site[role+"node_exporter_config_dir"] = "/etc/prometheus/node"
	out, _, err := WithAppliance(g, fakeLookup{vals: site})
	if err != nil {
		t.Fatal(err)
	}
	want := mustUser(t, "node-exp")
	want.Name, want.Group, want.Home = "prom-node", "monitoring", "/etc/prometheus/node"
	if got := out.UserDefs["node-exp"]; got != want || !slices.Equal(out.UserNames(), []string{"prom-node"}) || !slices.Equal(out.Users, g.Users) {
		t.Errorf("user %+v (names %q), want %+v", got, out.UserNames(), want)
	}
	if _, ok := g.UserDefs["node-exp"]; ok {
		t.Error("the built-in group was changed")
	}
	unit := out.Content["systemd_units"].([]any)[0].(map[string]any)["content"].(string)
	if !strings.Contains(unit, "\nUser=prom-node\n") || !strings.Contains(unit, "\nGroup=monitoring\n") {
		t.Errorf("unit:\n%s", unit)
	}
	files := out.Content["files"].([]any)
	for i, dest := range []string{"/etc/prometheus/node", "/var/lib/node_exporter"} {
		f := files[i].(map[string]any)
		if f["destination"] != dest || f["owner"] != "prom-node:monitoring" {
			t.Errorf("files[%d]: %v", i, f)
		}
	}
	for v, bad := range map[string]any{"node_exporter_system_user": "Prom Node", "node_exporter_system_group": "", "node_exporter_config_dir": "etc/node"} {
		site := nodeExporterStock()
		site[role+v] = bad
		if _, _, err := WithAppliance(g, fakeLookup{vals: site}); err == nil || !strings.Contains(err.Error(), `group "node_exporter": `+v+` (role prometheus.prometheus.node_exporter): `) {
			t.Errorf("%s = %q: %v, want an error naming the variable", v, bad, err)
		}
	}
}
