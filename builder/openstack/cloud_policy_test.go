package openstack

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/members"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/cloud"
)

// The lab's user is a project member, as on a real cloud, so the image
// owner cannot accept a membership for the consumer (Glance answers 403);
// the build accepts with a token re-scoped to the member project, which
// the user has a role on. On the old lab every token was admin and the
// owner's own call succeeded, hiding that a real cloud refuses it.
func TestBuildAutoAcceptsAsMemberProject(t *testing.T) {
	l := newLab(t, func(o *cloud.Options) {
		o.Users = []cloud.User{{Name: "lab", Password: "lab-password", Project: "lab", OtherProjects: []string{"share"}}}
	})
	share := l.c.ProjectID("share")
	b, art, ui, err := build(t, context.Background(), l, nil, "image_visibility", "shared",
		"image_members", []string{share}, "image_auto_accept_members", true)
	if err != nil {
		t.Fatalf("build: %v\n%s", err, ui.errors())
	}
	cl, _ := newClients(context.Background(), &b.config.AccessConfig, false, nil)
	m, err := members.Get(context.Background(), cl.image, art.Id(), share).Extract()
	if err != nil || m.Status != "accepted" {
		t.Fatalf("member %+v %v", m, err)
	}
}

// Without a role in the member project nothing can accept; the build says
// which project must accept and how.
func TestBuildAutoAcceptWithoutRoleFailsClearly(t *testing.T) {
	l := newLab(t, func(o *cloud.Options) {
		o.Users = []cloud.User{{Name: "lab", Password: "lab-password", Project: "lab"}, {Name: "other", Password: "pw", Project: "other"}}
	})
	other := l.c.ProjectID("other")
	_, _, _, err := build(t, context.Background(), l, nil, "image_visibility", "shared",
		"image_members", []string{other}, "image_auto_accept_members", true)
	if err == nil {
		t.Fatal("the build accepted a membership no real cloud lets it accept")
	}
	for _, want := range []string{"image_auto_accept_members", "project " + other + " must accept image", "--accept"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

// A flavor without a root disk is left to Nova, as the official builder
// does, with a warning naming the fix: Nova refuses the boot to a project
// member (and the build leaves nothing behind) and lets an admin build.
func TestBuildZeroDiskFlavorWithoutVolume(t *testing.T) {
	for _, admin := range []bool{false, true} {
		l := newLab(t, func(o *cloud.Options) {
			if admin {
				o.Users = []cloud.User{{Name: "lab", Password: "lab-password", Project: "lab", Roles: []string{"admin"}}}
			}
		})
		l.c.AddFlavor(cloud.Flavor{ID: "f0", Name: "m1.zero", VCPUs: 1, RAM: 1024, Disk: 0})
		_, art, ui, err := build(t, context.Background(), l, nil, "flavor", "m1.zero")
		if !slices.ContainsFunc(ui.says, func(s string) bool {
			return strings.Contains(s, "0 GB root disk") && strings.Contains(s, "use_blockstorage_volume = true")
		}) {
			t.Errorf("admin %v: no warning naming the fix in %q", admin, ui.says)
		}
		switch {
		case admin && err != nil:
			t.Errorf("admin: Nova allows a zero-disk boot, the build failed: %v", err)
		case admin && art == nil:
			t.Error("admin: no artifact")
		case !admin && (err == nil || !strings.Contains(err.Error(), "Only volume-backed servers are allowed for flavors with zero disk")):
			t.Errorf("member: err %v, want Nova's refusal", err)
		}
		if !admin {
			l.assertEmpty(t)
		}
	}
}
