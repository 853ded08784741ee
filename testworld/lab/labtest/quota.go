package labtest

import (
	"context"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/quotasets"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/quotas"
)

// ZeroQuota sets project's quota for resource to 0 as admin, and resets
// it when the test ends: "instances" in Nova, "floatingip" in Neutron.
// The lab's double and the real-cloud tier answer the same calls, so
// their tests of a build over a quota share it.
func ZeroQuota(tb testing.TB, admin *gophercloud.ProviderClient, eo gophercloud.EndpointOpts, project, resource string) {
	tb.Helper()
	ctx := context.Background()
	zero := gophercloud.IntToPointer(0)
	var reset func() error
	switch resource {
	case "instances":
		cc, err := openstack.NewComputeV2(admin, eo)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := quotasets.Update(ctx, cc, project, quotasets.UpdateOpts{Instances: zero}).Extract(); err != nil {
			tb.Fatal(err)
		}
		reset = func() error { return quotasets.Delete(ctx, cc, project).Err }
	case "floatingip":
		nc, err := openstack.NewNetworkV2(admin, eo)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := quotas.Update(ctx, nc, project, quotas.UpdateOpts{FloatingIP: zero}).Extract(); err != nil {
			tb.Fatal(err)
		}
		reset = func() error { return quotas.Delete(ctx, nc, project).ExtractErr() }
	default:
		tb.Fatalf("ZeroQuota: no quota %q", resource)
	}
	tb.Cleanup(func() {
		if err := reset(); err != nil {
			tb.Errorf("restoring the %s quota: %v", resource, err)
		}
	})
}

// RequireErrorLine fails tb unless the first line of out holding want[0]
// holds every one of want: an error's first line names its cause.
func RequireErrorLine(tb testing.TB, out string, want ...string) {
	tb.Helper()
	line := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, want[0]) {
			line = l
			break
		}
	}
	for _, w := range want {
		if !strings.Contains(line, w) {
			tb.Errorf("the error line lacks %q: %q\n%s", w, line, out)
		}
	}
}
