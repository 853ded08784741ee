package packagesets

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

type fakeLookup struct {
	vals  map[string]any
	holds map[string]bool
}

func (f fakeLookup) Value(role, name string) (any, bool, error) {
	v, ok := f.vals[role+"/"+name]
	if s, isErr := v.(error); isErr {
		return nil, true, s
	}
	return v, ok, nil
}

func (f fakeLookup) Holds(role, cond string) (bool, error) { return f.holds[role+"/"+cond], nil }

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
		"/ondemand_package":                    "ondemand-4.1.5",
		"/openhpc_packages":                    []any{"podman", "", "slurm-sview-ohpc"},
		"osc.ood/ondemand_dex_package":         "ondemand-dex",
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
		vals := map[string]any{v: tc.value, "osc.ood/ondemand_dex_package": "ondemand-dex"}
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

// TestCheckSources: the table's sources are held to a list that exists
// and items that are in it.
func TestCheckSources(t *testing.T) {
	g := Group{Name: "x", Set: Set{Packages: []string{"a"}, Content: map[string]any{"files": []any{}}}}
	for _, tc := range []struct {
		src  ApplianceVar
		want string
	}{
		{ApplianceVar{Into: "packages", Var: "v", Items: []string{"b"}}, `item "b" is not in packages`},
		{ApplianceVar{Into: "remove", Var: "v"}, "not packages nor a content path"},
		{ApplianceVar{Into: "content/files/3/x", Var: "v"}, "not an index"},
		{ApplianceVar{Into: "packages"}, "neither a variable nor a condition"},
		{ApplianceVar{Into: "content/files/0", Drop: true, When: "c"}, "no such element"},
		{ApplianceVar{Into: "content/files", Var: "v", Within: "zz"}, `"zz" is not within content/files`},
		{ApplianceVar{Into: "content/files", Drop: true, Var: "v", When: "c"}, "drop takes a condition and no variable"},
		{ApplianceVar{Into: "content/files", Var: "v", Latest: "a"}, `latest names a package, into "content/files" is not packages`},
	} {
		g.Appliance = []ApplianceVar{tc.src}
		if err := g.checkSources(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.src, err, tc.want)
		}
	}
}

// TestWithApplianceAppsImagesPins: which Open OnDemand apps, the
// container images' tags (in the units running them too) and the
// slurm-tools venv's pin come from the site's appliance.
func TestWithApplianceAppsImagesPins(t *testing.T) {
	look := fakeLookup{vals: map[string]any{
		"/ondemand_package": "ondemand-4.1.4", "osc.ood/ondemand_dex_package": "ondemand-dex",
		"/openondemand_install_app_rstudio":    map[string]any{"rstudio": map[string]any{"version": "2025.08.1"}},
		"/openondemand_install_app_codeserver": map[string]any{"codeserver": map[string]any{"version": "2025.09.1"}},
		"/openondemand_install_app_jupyter":    map[string]any{"jupyter": map[string]any{"version": "v1.2"}},
		"mysql/mysql_tag":                      "8.0.31",
		"opensearch/opensearch_version":        "2.11.0",
		"filebeat/filebeat_version":            "7.12.2",
		"slurm_tools/pytools_gitref":           "v2.0",
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
