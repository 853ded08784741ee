package cloud

import (
	"errors"
	"slices"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/faultinject"
)

// requireLost checks a create failed the way a lost answer fails: no
// status at all (dropped), or the replacing status.
func requireLost(t *testing.T, what string, err error, status int) {
	t.Helper()
	var ue gophercloud.ErrUnexpectedResponseCode
	switch {
	case err == nil:
		t.Fatalf("%s: the lost answer reached the client", what)
	case status == 0 && errors.As(err, &ue):
		t.Fatalf("%s: want a dropped connection, got status %d", what, ue.Actual)
	case status != 0 && !gophercloud.ResponseCodeIs(err, status):
		t.Fatalf("%s: want %d, got %v", what, status, err)
	}
}

func itemNames(items []StatusItem) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.Name)
	}
	return out
}

// TestLostAnswerServerActed: the second POST to /servers loses its answer
// (the connection closes); the first is answered; both servers exist.
func TestLostAnswerServerActed(t *testing.T) {
	l := newLab(t, nil)
	cl := l.clients()
	l.c.SetFaults(faultinject.LoseAnswer("POST", `^/compute/v2.1/servers$`, 2))
	mk := func(name string) (*servers.Server, error) {
		return servers.Create(ctx, cl.compute, servers.CreateOpts{Name: name, ImageRef: l.imageID, FlavorRef: testFlavor, Networks: "auto"}, nil).Extract()
	}
	if _, err := mk("answered"); err != nil {
		t.Fatalf("first create: %v", err)
	}
	_, err := mk("lost")
	requireLost(t, "second create", err, 0)
	if got := itemNames(l.c.Status().Servers); !slices.Contains(got, "lost") || !slices.Contains(got, "answered") {
		t.Fatalf("servers %v: the lost create did not act", got)
	}
	if hits := l.c.FaultHits(); hits[0] != 1 {
		t.Fatalf("hits %v", hits)
	}
	if _, err := mk("third"); err != nil {
		t.Fatalf("the fault applies once: %v", err)
	}
}

// TestLostAnswerReplaced: a keypair, a volume, an image and a volume
// upload act while a 502/503/504 (or a closed connection) comes back.
func TestLostAnswerReplaced(t *testing.T) {
	l := newLab(t, nil)
	cl := l.clients()
	lose := func(svc, path string, status int) {
		f := faultinject.LoseAnswer("POST", path, 1)
		f.Service, f.Status = svc, status
		l.c.SetFaults(f)
	}

	lose(SvcCompute, `/os-keypairs$`, 502)
	_, err := keypairs.Create(ctx, cl.compute, keypairs.CreateOpts{Name: "kp"}).Extract()
	requireLost(t, "keypair", err, 502)
	if got := itemNames(l.c.Status().Keypairs); !slices.Contains(got, "kp") {
		t.Fatalf("keypairs %v", got)
	}
	if _, err := keypairs.Create(ctx, cl.compute, keypairs.CreateOpts{Name: "kp"}).Extract(); !gophercloud.ResponseCodeIs(err, 409) {
		t.Fatalf("a retried create must meet the first one: %v", err)
	}

	lose(SvcVolume, `/volumes$`, 0)
	_, err = volumes.Create(ctx, cl.volume, volumes.CreateOpts{Size: 10, Name: "vol", ImageID: l.imageID}, nil).Extract()
	requireLost(t, "volume", err, 0)
	var volID string
	for _, v := range l.c.Status().Volumes {
		if v.Name == "vol" {
			volID = v.ID
		}
	}
	if volID == "" {
		t.Fatalf("volumes %v", l.c.Status().Volumes)
	}

	lose(SvcImage, `^/image/v2/images$`, 504)
	_, err = images.Create(ctx, cl.image, images.CreateOpts{Name: "img", DiskFormat: "raw", ContainerFormat: "bare"}).Extract()
	requireLost(t, "image", err, 504)
	if got := itemNames(l.c.Status().Images); !slices.Contains(got, "img") {
		t.Fatalf("images %v", got)
	}

	waitVolume(t, cl.volume, volID, "available")
	lose(SvcVolume, `/volumes/[^/]+/action$`, 503)
	_, err = volumes.UploadImage(ctx, cl.volume, volID, volumes.UploadImageOpts{ImageName: "uploaded", DiskFormat: "raw", ContainerFormat: "bare"}).Extract()
	requireLost(t, "upload", err, 503)
	pages, err := images.List(cl.image, images.ListOpts{Name: "uploaded"}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if imgs, _ := images.ExtractImages(pages); len(imgs) != 1 {
		t.Fatalf("the upload did not act: %+v", imgs)
	}
	if hits := l.c.FaultHits(); hits[0] != 1 {
		t.Fatalf("hits %v", hits)
	}
}
