package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/members"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
)

// TestBuilderSharesAndAccepts: with member-role credentials (the lab's
// default, as on a real site) a build shares its image with another
// project and accepts the membership for it. On the old lab every token
// was admin, so the owner's own accept passed where Glance refuses it.
func TestBuilderSharesAndAccepts(t *testing.T) {
	labtest.Require(t)
	member := theLab.Env["LAB_SHARE_PROJECT_ID"]
	if member == "" {
		t.Fatal("the lab's env has no LAB_SHARE_PROJECT_ID")
	}
	name := fmt.Sprintf("e2e-shared-%d", time.Now().Unix())
	r := build(t, []string{"builder-shared.pkr.hcl"}, "-var", "image_name="+name, "-var", "member="+member)
	if r.ExitCode != 0 {
		t.Fatalf("packer build failed:\n%s", r.Output())
	}
	img := findImage(t, name)
	ctx := context.Background()
	p, err := labtest.Provider(ctx, theLab)
	if err != nil {
		t.Fatal(err)
	}
	ic, err := openstack.NewImageV2(p, gophercloud.EndpointOpts{Region: "RegionOne"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := members.Get(ctx, ic, img.ID, member).Extract()
	if err != nil || m.Status != "accepted" {
		t.Fatalf("membership of %s: %+v %v", member, m, err)
	}
	// and the owner alone could not have accepted it
	if _, err := members.Update(ctx, ic, img.ID, member, members.UpdateOpts{Status: "pending"}).Extract(); !gophercloud.ResponseCodeIs(err, 403) {
		t.Fatalf("the owner changed the member's status: %v", err)
	}
	labtest.RequireClean(t, theLab)
}
