//go:build realcloud

package realcloud

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
)

// reuse_ips takes a free (DOWN, unattached) floating IP of the project
// instead of allocating one, and leaves it, detached, to the project.
func TestReuseIPs(t *testing.T) {
	tr := tier(t)
	nc, fip := projectFloatingIP(t, tr)
	r := mustBuild(t, tr, rcTemplate(t, tr, fmt.Sprintf(`
  source_image_name = %q
  reuse_ips = true
  floating_ip_network = %q
  image_name = "unused"
  skip_create_image = true`, BaseImageName, FloatingNetwork), ""))
	mustContain(t, r.Output(), "Reusing the free floating IP "+fip.FloatingIP, "Floating IP "+fip.FloatingIP+" is attached", "Detaching floating IP")
	if strings.Contains(r.Output(), "Allocating a floating IP") {
		t.Errorf("reuse_ips allocated a floating IP:\n%s", r.Output())
	}
	requireDetached(t, nc, fip.ID)
}

// Quotas set to zero by the admin in real Nova and real Neutron: the
// build fails at the step that hits the quota, its error names the quota,
// and whatever it made before (the server, for the floating IP) is gone.
func TestQuotaExceeded(t *testing.T) {
	tr := tier(t)
	ctx := context.Background()
	admin, err := tr.Provider(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	idc, err := openstack.NewIdentityV3(admin, EndpointOpts)
	if err != nil {
		t.Fatal(err)
	}
	project, err := ensureProject(ctx, idc, MemberProject, "default")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		resource string // set to 0
		attrs    string
		want     []string // on the line that reports the error
	}{
		{resource: "instances", want: []string{"creating server", "403", "Quota exceeded for instances"}},
		{resource: "floatingip", attrs: fmt.Sprintf("floating_ip_network = %q", FloatingNetwork),
			want: []string{"floating_ip_network: allocating a floating IP", "409", "Quota exceeded for resources: ['floatingip']"}},
	} {
		t.Run(tc.resource, func(t *testing.T) {
			clean(t, tr)
			labtest.ZeroQuota(t, admin, EndpointOpts, project, tc.resource)
			r := build(t, tr, rcTemplate(t, tr, fmt.Sprintf(`
  source_image_name = %q
  image_name = %q
  %s`, BaseImageName, uniqueName("rc-quota"), tc.attrs), ""))
			if r.ExitCode == 0 {
				t.Fatalf("packer build passed over a zero quota:\n%s", r.Output())
			}
			labtest.RequireErrorLine(t, r.Output(), tc.want...)
		})
	}
}

// A token revoked in the middle of a build (Keystone revokes every token
// of a user that is disabled; the shell-local step disables and
// re-enables the member as the admin, with the real CLI): the builder's
// next call is refused with 401, it authenticates again and the build
// ends with an image. The services cache a token's validation for 10 s
// (TokenCacheSeconds): the step outlasts that cache
// (a configured expiry, not a guess at another process's progress) so
// every later call of the builder carries a token the services refuse.
// The test's own token from before the revocation is refused by Nova
// afterwards, so the builder's was too.
func TestTokenRevokedMidBuild(t *testing.T) {
	tr := tier(t)
	clean(t, tr)
	old, err := tr.Provider(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	old.ReauthFunc = nil // keep the token from before the revocation
	oldCompute, err := openstack.NewComputeV2(old, EndpointOpts)
	if err != nil {
		t.Fatal(err)
	}
	name := uniqueName("rc-reauth")
	revoke := fmt.Sprintf(`
  provisioner "shell-local" {
    inline = [
      "/usr/bin/openstack --os-cloud %[1]s user set --disable %[2]s",
      "/usr/bin/openstack --os-cloud %[1]s user set --enable %[2]s",
      "sleep %[3]d",
    ]
  }
`, AdminCloudName, MemberUser, TokenCacheSeconds+1)
	r := mustBuild(t, tr, rcTemplate(t, tr, fmt.Sprintf(`
  source_image_name = %q
  image_name = %q`, BaseImageName, name), revoke))
	mustContain(t, r.Output(), "Stopping server", "Creating image "+name)
	ic := client(t, tr, false, openstack.NewImageV2)
	imageNamed(t, ic, name)
	_, err = servers.List(oldCompute, nil).AllPages(context.Background())
	if !gophercloud.ResponseCodeIs(err, http.StatusUnauthorized) {
		t.Errorf("Nova took a token from before the revocation (%v): the build may not have needed to authenticate again", err)
	}
}
