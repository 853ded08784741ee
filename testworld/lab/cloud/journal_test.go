package cloud

import (
	"context"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
)

// The journal records the calls that change something, by user, with
// their bodies and answers, only while recording; AddUser adds a user of
// existing projects only, once.
func TestJournalByUser(t *testing.T) {
	l := newLab(t, nil)
	ctx := context.Background()
	if err := l.c.AddUser(User{Name: "run-1", Password: "pw-1", Project: "lab"}); err != nil {
		t.Fatal(err)
	}
	if err := l.c.AddUser(User{Name: "run-1", Password: "pw-2", Project: "lab"}); err == nil {
		t.Error("a second user run-1 was added")
	}
	if err := l.c.AddUser(User{Name: "run-2", Password: "pw", Project: "nowhere"}); err == nil {
		t.Error("a user of a project that does not exist was added")
	}
	mine := l.clients().compute
	p := l.provider(gophercloud.AuthOptions{Username: "run-1", Password: "pw-1", DomainName: "Default", TenantName: "lab"})
	theirs, err := openstack.NewComputeV2(p, gophercloud.EndpointOpts{Region: "RegionOne"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := keypairs.Create(ctx, mine, keypairs.CreateOpts{Name: "before"}).Extract(); err != nil {
		t.Fatal(err)
	}
	l.c.RecordRequests(true)
	for _, c := range []*gophercloud.ServiceClient{mine, theirs} {
		if _, err := keypairs.Create(ctx, c, keypairs.CreateOpts{Name: "kp"}).Extract(); err != nil {
			t.Fatal(err)
		}
		if _, err := keypairs.List(c, nil).AllPages(ctx); err != nil {
			t.Fatal(err)
		}
	}
	_ = keypairs.Create(ctx, theirs, keypairs.CreateOpts{Name: "kp"}).Err // taken: 409
	got := l.c.Requests()
	if len(got) != 3 {
		t.Fatalf("recorded %d calls, want the 3 creates: %+v", len(got), got)
	}
	if r := got[1]; r.User != "run-1" || r.Service != SvcCompute || r.Method != "POST" || !strings.HasSuffix(r.Path, "/os-keypairs") ||
		!strings.Contains(string(r.Body), `"kp"`) || r.Status != 200 || !strings.Contains(string(r.Answer), "private_key") {
		t.Errorf("run-1's create: %+v", r)
	}
	if got[0].User != "lab" || got[2].Status != 409 {
		t.Errorf("calls %+v", got)
	}
	l.c.RecordRequests(false)
	_ = keypairs.Delete(ctx, mine, "kp", nil)
	if n := len(l.c.Requests()); n != 0 {
		t.Errorf("%d calls kept after recording stopped", n)
	}
	_ = keypairs.Delete(ctx, mine, "before", nil)
	_ = keypairs.Delete(ctx, theirs, "kp", nil)
}

// A snapshot's metadata wins over Nova's own properties, as in Nova: the
// official builder's image_type = "image" stays.
func TestSnapshotMetadataWins(t *testing.T) {
	l := newLab(t, nil)
	cl := l.clients()
	ctx := context.Background()
	s, err := servers.Create(ctx, cl.compute, servers.CreateOpts{Name: "snap", ImageRef: l.imageID, FlavorRef: testFlavor, Networks: "auto"}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	waitServer(t, cl.compute, s.ID, "ACTIVE")
	id, err := servers.CreateImage(ctx, cl.compute, s.ID, servers.CreateImageOpts{Name: "img", Metadata: map[string]string{"image_type": "image"}}).ExtractImageID()
	if err != nil {
		t.Fatal(err)
	}
	img := waitImage(t, cl.image, id, "active")
	if img.Properties["image_type"] != "image" || img.Properties["instance_uuid"] != s.ID {
		t.Errorf("properties %v, want image_type = image and Nova's instance_uuid", img.Properties)
	}
}
