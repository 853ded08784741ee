package fatimage

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
)

// cvmfsValue is cvmfs_config as the site's Ansible gives it, keys in order.
func cvmfsValue(kv ...string) appliance.Value {
	m := map[string]any{}
	var keys []string
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
		keys = append(keys, kv[i])
	}
	return appliance.Value{Defined: true, Value: m, Keys: keys}
}

// TestWithoutBuildProxy: the build VM's own address leaves the cvmfs
// client's proxies; with none left, the role's single profile. The
// appliance's builder (in squid) resolves to its own address alone,
// which makes the f49fc24 file.
func TestWithoutBuildProxy(t *testing.T) {
	const vm = "10.0.0.9"
	for name, tc := range map[string]struct {
		in, want appliance.Value
	}{
		"the builder alone": {cvmfsValue("CVMFS_QUOTA_LIMIT", "10000", "CVMFS_HTTP_PROXY", "'http://10.0.0.9:3128'"),
			cvmfsValue("CVMFS_CLIENT_PROFILE", "single", "CVMFS_QUOTA_LIMIT", "10000")},
		"a cluster squid too": {cvmfsValue("CVMFS_QUOTA_LIMIT", "10000", "CVMFS_HTTP_PROXY", "'http://10.0.0.5:3128|http://10.0.0.9:3128'"),
			cvmfsValue("CVMFS_QUOTA_LIMIT", "10000", "CVMFS_HTTP_PROXY", "'http://10.0.0.5:3128'")},
		"fail-over groups": {cvmfsValue("CVMFS_HTTP_PROXY", "http://10.0.0.9:3128;DIRECT"), cvmfsValue("CVMFS_HTTP_PROXY", "DIRECT")},
		"another proxy":    {cvmfsValue("CVMFS_HTTP_PROXY", "'http://proxy.site:3128'"), cvmfsValue("CVMFS_HTTP_PROXY", "'http://proxy.site:3128'")},
		"a profile kept": {cvmfsValue("CVMFS_HTTP_PROXY", "'http://10.0.0.9:3128'", "CVMFS_CLIENT_PROFILE", "custom"),
			cvmfsValue("CVMFS_CLIENT_PROFILE", "custom")},
		"no proxy": {cvmfsValue("CVMFS_CLIENT_PROFILE", "single", "CVMFS_QUOTA_LIMIT", "20000"),
			cvmfsValue("CVMFS_CLIENT_PROFILE", "single", "CVMFS_QUOTA_LIMIT", "20000")},
	} {
		got := withoutBuildProxy(tc.in, vm)
		if !slices.Equal(got.Keys, tc.want.Keys) || fmt.Sprint(got.Value) != fmt.Sprint(tc.want.Value) {
			t.Errorf("%s: %v %v, want %v %v", name, got.Keys, got.Value, tc.want.Keys, tc.want.Value)
		}
	}
	in := cvmfsValue("CVMFS_HTTP_PROXY", "'http://10.0.0.9:3128'")
	if withoutBuildProxy(in, ""); in.Value.(map[string]any)["CVMFS_HTTP_PROXY"] == nil || len(in.Keys) != 1 {
		t.Error("the resolution's value was changed")
	}
	if got := withoutBuildProxy(in, ""); got.Value.(map[string]any)["CVMFS_HTTP_PROXY"] == nil {
		t.Error("an unknown build host left a proxy out")
	}
}

// TestPlanFromApplianceCvmfs: with the site's appliance, the eessi
// group's /etc/cvmfs/default.local is the site's cvmfs_config as the
// role's template writes it (its overrides, in its order), the build
// VM's own proxy left out; image.json records the variable.
func TestPlanFromApplianceCvmfs(t *testing.T) {
	c := siteConfig(t)
	res := overridesResult()
	holdAll(res, true)
	res.Groups = append(res.Groups, "eessi")
	res.Values["eessi"] = map[string]appliance.Value{"cvmfs_config": cvmfsValue("CVMFS_QUOTA_LIMIT", "20000",
		"CVMFS_HTTP_PROXY", "'http://10.0.0.5:3128|http://192.0.2.7:3128'", "CVMFS_USE_GEOAPI", "yes")}
	p, err := c.plan(newApplianceValues(res, "192.0.2.7"), "")
	if err != nil {
		t.Fatal(err)
	}
	f, ok := fileAt(p, "/etc/cvmfs/default.local")
	want := "CVMFS_QUOTA_LIMIT=20000\nCVMFS_HTTP_PROXY='http://10.0.0.5:3128'\nCVMFS_USE_GEOAPI=yes\n"
	if !ok || f.Content != want || f.Mode != "0644" {
		t.Errorf("default.local %+v, want content %q", f, want)
	}
	rec := p.applianceRecord()
	if !slices.ContainsFunc(rec.FromAppliance, func(v imageApplianceValue) bool {
		return v.Group == "eessi" && v.Variable == "cvmfs_config" && v.Role == "eessi" && len(v.Values) == 1 && v.Values[0] == want
	}) {
		t.Errorf("image.json does not record cvmfs_config: %+v", rec.FromAppliance)
	}
	// the appliance's builder, in squid: its own address only
	res.Values["eessi"]["cvmfs_config"] = cvmfsValue("CVMFS_QUOTA_LIMIT", "10000", "CVMFS_HTTP_PROXY", "'http://192.0.2.7:3128'")
	if p, err = c.plan(newApplianceValues(res, "192.0.2.7"), ""); err != nil {
		t.Fatal(err)
	}
	if f, _ := fileAt(p, "/etc/cvmfs/default.local"); f.Content != "CVMFS_CLIENT_PROFILE=single\nCVMFS_QUOTA_LIMIT=10000\n" {
		t.Errorf("the builder's own proxy: default.local %q, want the f49fc24 file", f.Content)
	}
}
