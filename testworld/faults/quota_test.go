package faults

import (
	"context"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/quotasets"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/quotas"

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
	zero := gophercloud.IntToPointer(0)
	for _, tc := range []struct {
		name string
		set  func(t *testing.T) // sets the quota to 0 and restores it at the end
		want []string           // on the line that reports the error
	}{
		{name: "nova-instances", set: func(t *testing.T) {
			cc, err := openstack.NewComputeV2(admin, eo)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := quotasets.Update(ctx, cc, project, quotasets.UpdateOpts{Instances: zero}).Extract(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := quotasets.Delete(ctx, cc, project).Err; err != nil {
					t.Errorf("restoring the compute quota: %v", err)
				}
			})
		}, want: []string{"creating server", "403", "Quota exceeded for instances: Requested 1, but already used 0 of 0 instances"}},
		{name: "neutron-floatingip", set: func(t *testing.T) {
			nc, err := openstack.NewNetworkV2(admin, eo)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := quotas.Update(ctx, nc, project, quotas.UpdateOpts{FloatingIP: zero}).Extract(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := quotas.Delete(ctx, nc, project).ExtractErr(); err != nil {
					t.Errorf("restoring the network quota: %v", err)
				}
			})
		}, want: []string{"floating_ip_network: allocating a floating IP", "409", "Quota exceeded for resources: ['floatingip']"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := uniqueName("quota")
			tc.set(t)
			b, r := runBuild(t, "builder", nil, "-var", "image_name="+name)
			requireFailedClean(t, r, name)
			line := ""
			for _, l := range strings.Split(r.Output(), "\n") {
				if strings.Contains(l, tc.want[0]) {
					line = l
					break
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("the error line lacks %q: %q\n%s", w, line, r.Output())
				}
			}
			auditBuild(t, b, r)
		})
	}
}
