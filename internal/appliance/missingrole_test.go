package appliance_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
)

// TestMissingRoleLeftOut: a site without a Galaxy role (osc.ood, here with
// no Galaxy roles path at all) or a collection's resolves the other
// queries; the role's is left out, and asking its scope says which role
// is missing and where the site's Ansible looks for it. The appliance's
// own roles and an installed collection's are found.
func TestMissingRoleLeftOut(t *testing.T) {
	s := appliancesite.New(t, ".stackhpc")
	s.RolesPath = nil
	req := appliance.Request{Queries: []appliance.Query{
		{Vars: []string{"grafana_version"}},
		{Role: "openondemand", Vars: []string{"openondemand_auth"}},
		{Role: "osc.ood", Vars: []string{"ondemand_dex_package"}},
		{Role: "stackhpc.ns.role", Vars: []string{"x"}},
		{Role: "stackhpc.linux.vgpu", Vars: []string{"vgpu_nvidia_mig_manager_rpm_url"}},
	}}
	got, missing, err := s.WithoutMissingRoles(req)
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, q := range got.Queries {
		roles = append(roles, q.Role)
	}
	if strings.Join(roles, ",") != ",openondemand,stackhpc.linux.vgpu" {
		t.Errorf("queries kept: %q", roles)
	}
	where, ok := missing["osc.ood"]
	if len(missing) != 2 || !ok || !strings.Contains(where, "ansible/roles") || !strings.Contains(where, "appliance_roles_path") {
		t.Errorf("missing %v", missing)
	}
	if where := missing["stackhpc.ns.role"]; !strings.Contains(where, "ansible_collections/stackhpc/ns/roles") || !strings.Contains(where, "appliance_collections_path") {
		t.Errorf("a collection's role: missing %v", missing)
	}
	res := &appliance.Result{MissingRoles: missing}
	if err := res.RoleMissing("osc.ood"); err == nil || !strings.Contains(err.Error(), "the role osc.ood is not installed: the site's Ansible looks for it in ") {
		t.Errorf("RoleMissing: %v", err)
	}
	if err := res.RoleMissing("openondemand"); !errors.Is(err, nil) {
		t.Errorf("openondemand: %v", err)
	}
	// with the Galaxy roles, only the collection no site has is missing
	s = appliancesite.New(t, ".stackhpc")
	if _, missing, err := s.WithoutMissingRoles(req); err != nil || len(missing) != 1 || missing["stackhpc.ns.role"] == "" {
		t.Errorf("with Galaxy roles: %v %v", missing, err)
	}
}
