package appliance_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
)

// TestMissingRoleLeftOut: a site without a Galaxy role (osc.ood, here with
// no Galaxy roles path at all) resolves the other queries; the role's is
// left out, and asking its scope says which role is missing and where the
// site's Ansible looks for it. The appliance's own roles are found.
func TestMissingRoleLeftOut(t *testing.T) {
	s := appliancesite.New(t, ".stackhpc")
	s.RolesPath = nil
	req := appliance.Request{Queries: []appliance.Query{
		{Vars: []string{"grafana_version"}},
		{Role: "openondemand", Vars: []string{"openondemand_auth"}},
		{Role: "osc.ood", Vars: []string{"ondemand_dex_package"}},
		{Role: "stackhpc.ns.role", Vars: []string{"x"}},
	}}
	got, missing, err := s.WithoutMissingRoles(req)
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, q := range got.Queries {
		roles = append(roles, q.Role)
	}
	if strings.Join(roles, ",") != ",openondemand,stackhpc.ns.role" {
		t.Errorf("queries kept: %q", roles)
	}
	where, ok := missing["osc.ood"]
	if len(missing) != 1 || !ok || !strings.Contains(where, "ansible/roles") || !strings.Contains(where, "appliance_roles_path") {
		t.Errorf("missing %v", missing)
	}
	res := &appliance.Result{MissingRoles: missing}
	if err := res.RoleMissing("osc.ood"); err == nil || !strings.Contains(err.Error(), "the role osc.ood is not installed: the site's Ansible looks for it in ") {
		t.Errorf("RoleMissing: %v", err)
	}
	if err := res.RoleMissing("openondemand"); !errors.Is(err, nil) {
		t.Errorf("openondemand: %v", err)
	}
	// with the Galaxy roles, nothing is missing
	s = appliancesite.New(t, ".stackhpc")
	if _, missing, err := s.WithoutMissingRoles(req); err != nil || len(missing) != 0 {
		t.Errorf("with Galaxy roles: %v %v", missing, err)
	}
}
