package faults

import (
	"context"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
)

// TestQuotaExceeded is the real-cloud tier's test of the same name on the
// lab: the lab's admin sets the lab project's quota to zero through the
// double's Nova and Neutron quota APIs (no fault injected), the build
// fails at the step that hits it with the service's own message on its
// error line, and nothing is left behind.
func TestQuotaExceeded(t *testing.T) {
	labtest.Require(t)
	ctx := context.Background()
	admin, err := openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{
		IdentityEndpoint: theLab.Cloud.AuthURL(), Username: "lab-admin", Password: theLab.AdminPassword,
		TenantName: "admin", DomainName: "Default",
	})
	if err != nil {
		t.Fatal(err)
	}
	eo := gophercloud.EndpointOpts{Region: "RegionOne"}
	project := theLab.Cloud.ProjectID("lab")
	for _, tc := range []struct {
		resource string   // set to 0
		want     []string // on the line that reports the error
	}{
		{"instances", []string{"creating server", "403", "Quota exceeded for instances: Requested 1, but already used 0 of 0 instances"}},
		{"floatingip", []string{"floating_ip_network: allocating a floating IP", "409", "Quota exceeded for resources: ['floatingip']"}},
	} {
		t.Run(tc.resource, func(t *testing.T) {
			name := uniqueName("quota")
			labtest.ZeroQuota(t, admin, eo, project, tc.resource)
			b, r := runBuild(t, "builder", nil, "-var", "image_name="+name)
			requireFailedClean(t, r, name)
			labtest.RequireErrorLine(t, r.Output(), tc.want...)
			auditBuild(t, b, r)
		})
	}
}
