package cloud

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/imagedata"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/members"
	"github.com/gophercloud/gophercloud/v2/pagination"
)

func uploadData(c *gophercloud.ServiceClient, id string, data []byte) error {
	return imagedata.Upload(ctx, c, id, bytes.NewReader(data)).ExtractErr()
}

func downloadData(c *gophercloud.ServiceClient, id string) ([]byte, error) {
	r, err := imagedata.Download(ctx, c, id).Extract()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return readAll(r), nil
}

// names lists images page by page, returning names and the page count.
func names(t *testing.T, c *gophercloud.ServiceClient, o images.ListOpts) ([]string, int) {
	t.Helper()
	var out []string
	pages := 0
	err := images.List(c, o).EachPage(ctx, func(_ context.Context, p pagination.Page) (bool, error) {
		pages++
		is, err := images.ExtractImages(p)
		for _, i := range is {
			out = append(out, i.Name)
		}
		return true, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, pages
}

func eqStrs(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestImageAPI(t *testing.T) {
	l := newLab(t, func(o *Options) {
		o.Users = append(o.Users, User{Name: "other", Password: "pw2", Project: "other"},
			User{Name: "admin", Password: "admin-pw", Project: "admin", Roles: []string{"admin"}})
	})
	cl := l.clients()
	pa := l.provider(gophercloud.AuthOptions{Username: "admin", Password: "admin-pw", DomainName: "Default", TenantName: "admin"})
	adminImg, err := openstack.NewImageV2(pa, gophercloud.EndpointOpts{Region: "RegionOne"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i, n := range []string{"img-c", "img-a", "img-b"} {
		vis := images.ImageVisibilityPrivate
		if i == 2 {
			vis = images.ImageVisibilityShared
		}
		im, err := images.Create(ctx, cl.image, images.CreateOpts{Name: n, DiskFormat: "qcow2", ContainerFormat: "bare", Visibility: &vis,
			MinDisk: 5 + i, Tags: []string{"lab", n}, Properties: map[string]string{"build": n}}).Extract()
		if err != nil {
			t.Fatal(err)
		}
		if im.Properties["build"] != n || im.Owner == "" || im.Schema == "" || im.File == "" {
			t.Fatalf("create: %+v", im)
		}
		ids = append(ids, im.ID)
		if err := uploadData(cl.image, im.ID, []byte(n)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond) // distinct created_at ordering is by time then id
	}
	// filters
	if got, _ := names(t, cl.image, images.ListOpts{Name: "img-a"}); !eqStrs(got, []string{"img-a"}) {
		t.Fatalf("name filter: %v", got)
	}
	if got, _ := names(t, cl.image, images.ListOpts{Tags: []string{"lab", "img-b"}}); !eqStrs(got, []string{"img-b"}) {
		t.Fatalf("tag filter: %v", got)
	}
	if got, _ := names(t, cl.image, images.ListOpts{Visibility: images.ImageVisibilityPublic}); !eqStrs(got, []string{testImageName}) {
		t.Fatalf("visibility filter: %v", got)
	}
	if got, _ := names(t, cl.image, images.ListOpts{Status: images.ImageStatusActive, Owner: "nobody"}); len(got) != 0 {
		t.Fatalf("owner filter: %v", got)
	}
	// sort + pagination
	got, pages := names(t, cl.image, images.ListOpts{Sort: "name:asc", Limit: 2})
	if !eqStrs(got, []string{testImageName, "img-a", "img-b", "img-c"}) || pages != 2 {
		t.Fatalf("sort asc paginated: %v pages=%d", got, pages)
	}
	if got, _ := names(t, cl.image, images.ListOpts{SortKey: "name", SortDir: "desc", Tags: []string{"lab"}}); !eqStrs(got, []string{"img-c", "img-b", "img-a"}) {
		t.Fatalf("sort_key desc: %v", got)
	}
	if got, _ := names(t, cl.image, images.ListOpts{Sort: "created_at:desc", Tags: []string{"lab"}}); !eqStrs(got, []string{"img-b", "img-a", "img-c"}) {
		t.Fatalf("created_at desc: %v", got)
	}
	// patch: publicizing is an admin's (Glance's publicize_image policy),
	// so the member's patch changes nothing and the admin's applies.
	pub := images.ImageVisibilityPublic
	patch := images.UpdateOpts{
		images.ReplaceImageName{NewName: "img-c2"},
		images.UpdateVisibility{Visibility: pub},
		images.ReplaceImageMinDisk{NewMinDisk: 30},
		images.ReplaceImageTags{NewTags: []string{"x"}},
		images.UpdateImageProperty{Op: images.AddOp, Name: "extra", Value: "1"},
		images.UpdateImageProperty{Op: images.RemoveOp, Name: "build"},
		images.ReplaceImageProtected{NewProtected: true},
	}
	_, err = images.Update(ctx, cl.image, ids[0], patch).Extract()
	if !gophercloud.ResponseCodeIs(err, 403) || !strings.Contains(err.Error(), "publicize_image") {
		t.Fatalf("member publicizes: %v", err)
	}
	if im, _ := images.Get(ctx, cl.image, ids[0]).Extract(); im.Name != "img-c" || im.Visibility == pub {
		t.Fatalf("a refused patch changed the image: %+v", im)
	}
	if _, err := images.Update(ctx, cl.image, ids[0], images.UpdateOpts{images.UpdateImageProperty{Op: images.AddOp, Name: "owner", Value: "x"}}).Extract(); !gophercloud.ResponseCodeIs(err, 403) {
		t.Fatalf("member gives the image away: %v", err)
	}
	im, err := images.Update(ctx, adminImg, ids[0], patch).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if im.Name != "img-c2" || im.Visibility != pub || im.MinDiskGigabytes != 30 || !eqStrs(im.Tags, []string{"x"}) ||
		im.Properties["extra"] != "1" || im.Properties["build"] != nil || !im.Protected {
		t.Fatalf("patched: %+v", im)
	}
	if _, err := images.Update(ctx, cl.image, ids[0], images.UpdateOpts{images.UpdateImageProperty{Op: images.RemoveOp, Name: "missing"}}).Extract(); !gophercloud.ResponseCodeIs(err, 409) {
		t.Fatalf("remove missing: %v", err)
	}
	// protected delete is refused (Glance: 403)
	if err := images.Delete(ctx, cl.image, ids[0]).ExtractErr(); !gophercloud.ResponseCodeIs(err, 403) {
		t.Fatalf("protected delete: %v", err)
	}
	images.Update(ctx, cl.image, ids[0], images.UpdateOpts{images.ReplaceImageProtected{NewProtected: false}})
	// tags
	if err := putTag(cl, ids[1], "new"); err != nil {
		t.Fatal(err)
	}
	im, _ = images.Get(ctx, cl.image, ids[1]).Extract()
	if !eqStrs(im.Tags, []string{"lab", "img-a", "new"}) {
		t.Fatalf("tags: %v", im.Tags)
	}
	if err := delTag(cl, ids[1], "lab"); err != nil {
		t.Fatal(err)
	}
	// members on the shared image, seen from a second project
	po := l.provider(gophercloud.AuthOptions{Username: "other", Password: "pw2", DomainName: "Default", TenantName: "other"})
	otherImg, err := openstack.NewImageV2(po, gophercloud.EndpointOpts{Region: "RegionOne"})
	if err != nil {
		t.Fatal(err)
	}
	otherProj := projectByName(l, "other")
	if got, _ := names(t, otherImg, images.ListOpts{Sort: "name:asc"}); !eqStrs(got, []string{testImageName, "img-c2"}) {
		t.Fatalf("other sees: %v", got)
	}
	if _, err := members.Create(ctx, cl.image, ids[2], otherProj).Extract(); err != nil {
		t.Fatal(err)
	}
	if got, _ := names(t, otherImg, images.ListOpts{MemberStatus: images.ImageMemberStatusPending, Sort: "name:asc"}); !eqStrs(got, []string{testImageName, "img-b", "img-c2"}) {
		t.Fatalf("pending: %v", got)
	}
	if _, err := members.Update(ctx, otherImg, ids[2], otherProj, members.UpdateOpts{Status: "accepted"}).Extract(); err != nil {
		t.Fatal(err)
	}
	if got, _ := names(t, otherImg, images.ListOpts{Sort: "name:asc"}); !eqStrs(got, []string{testImageName, "img-b", "img-c2"}) {
		t.Fatalf("accepted: %v", got)
	}
	if err := members.Delete(ctx, cl.image, ids[2], otherProj).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	m, err := members.Create(ctx, cl.image, ids[2], "other-project").Extract()
	if err != nil || m.Status != "pending" {
		t.Fatalf("member: %+v %v", m, err)
	}
	if _, err := members.Create(ctx, cl.image, ids[1], "other-project").Extract(); !gophercloud.ResponseCodeIs(err, 403) {
		t.Fatalf("member on private image: %v", err)
	}
	pg, _ := members.List(cl.image, ids[2]).AllPages(ctx)
	ms, _ := members.ExtractMembers(pg)
	if len(ms) != 1 {
		t.Fatalf("members: %v", ms)
	}
	// Only the member project, or an admin, may accept (Glance answers
	// the owner 403).
	if _, err := members.Update(ctx, cl.image, ids[2], "other-project", members.UpdateOpts{Status: "accepted"}).Extract(); !gophercloud.ResponseCodeIs(err, 403) {
		t.Fatalf("owner accepts for the member: %v", err)
	}
	if m, err := members.Update(ctx, adminImg, ids[2], "other-project", members.UpdateOpts{Status: "accepted"}).Extract(); err != nil || m.Status != "accepted" {
		t.Fatalf("admin accepts: %v", err)
	}
	if m, err := members.Get(ctx, cl.image, ids[2], "other-project").Extract(); err != nil || m.Status != "accepted" {
		t.Fatalf("get member: %v", err)
	}
	if err := members.Delete(ctx, cl.image, ids[2], "other-project").ExtractErr(); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if err := images.Delete(ctx, cl.image, id).ExtractErr(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := images.Get(ctx, cl.image, ids[0]).Extract(); !gophercloud.ResponseCodeIs(err, 404) {
		t.Fatalf("deleted: %v", err)
	}
	l.assertClean()
}

func putTag(cl clients, id, tag string) error {
	_, err := cl.image.Put(ctx, cl.image.ServiceURL("images", id, "tags", tag), nil, nil, &gophercloud.RequestOpts{OkCodes: []int{204}})
	return err
}

func delTag(cl clients, id, tag string) error {
	_, err := cl.image.Delete(ctx, cl.image.ServiceURL("images", id, "tags", tag), &gophercloud.RequestOpts{OkCodes: []int{204}})
	return err
}

func projectByName(l *lab, name string) string {
	for _, p := range l.c.identity.projects {
		if p.Name == name {
			return p.ID
		}
	}
	return ""
}
