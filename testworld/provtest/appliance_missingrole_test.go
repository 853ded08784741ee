package provtest

import (
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
)

// TestApplianceMissingRoleLab: a site whose deploy host lacks the Galaxy
// roles (no appliance_roles_path: osc.ood is nowhere) resolves its
// variables with its own Ansible on a lab VM and builds what needs none
// of osc.ood's values; a build of the openondemand group fails at the
// appliance step, naming the role and where the site's Ansible looks.
func TestApplianceMissingRoleLab(t *testing.T) {
	ctx, srv, comm := labVM(t, "appliance-missingrole", 20*time.Minute)
	site := appliancesite.New(t, appliancesite.Overrides)
	raw := siteConfig(t, site)
	delete(raw, "appliance_roles_path")
	raw["groups"] = []string{"always", "openondemand"}
	out, err := tryProvisionSite(ctx, t, srv, comm, raw)
	if err == nil || !strings.Contains(err.Error(), "the role osc.ood is not installed: the site's Ansible looks for it in ") ||
		!strings.Contains(err.Error(), "ansible/roles") {
		t.Fatalf("openondemand without osc.ood: %v\n%s", err, out)
	}
	raw["groups"] = []string{"always", "kernel_modules"}
	out = provisionSite(ctx, t, srv, comm, raw)
	if !strings.Contains(out, "values from it") {
		t.Errorf("no resolution summary:\n%s", out)
	}
}
