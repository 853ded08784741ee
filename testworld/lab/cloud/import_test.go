package cloud

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/imageimport"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
)

// importingHV adds DiskImporter to the fake hypervisor.
type importingHV struct {
	*fakeHV
	imported [][]byte
}

func (h *importingHV) ImportDisk(r io.Reader, format string) (string, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return "", err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n++
	id := fmt.Sprintf("imported-%d", h.n)
	h.disks[id] = int64(len(b))
	h.imported = append(h.imported, b)
	return id, nil
}

func TestImageImport(t *testing.T) {
	payload := bytes.Repeat([]byte("qcow"), 1000)
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(payload) }))
	defer web.Close()
	var ihv *importingHV
	l := newLab(t, func(o *Options) {
		ihv = &importingHV{fakeHV: o.Hypervisor.(*fakeHV)}
		o.Hypervisor = ihv
	})
	cl := l.clients()
	info, err := imageimport.Get(ctx, cl.image).Extract()
	if err != nil || len(info.ImportMethods.Value) != 2 {
		t.Fatalf("import info: %+v %v", info, err)
	}
	img, err := images.Create(ctx, cl.image, images.CreateOpts{Name: "ext", DiskFormat: "qcow2", ContainerFormat: "bare"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if err := imageimport.Create(ctx, cl.image, img.ID, imageimport.CreateOpts{Name: imageimport.WebDownloadMethod, URI: web.URL + "/x.qcow2"}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	got := waitImage(t, cl.image, img.ID, "active")
	if got.SizeBytes != int64(len(payload)) || len(ihv.imported) != 1 || !bytes.Equal(ihv.imported[0], payload) {
		t.Fatalf("imported: %+v", got)
	}
	// glance-direct: stage then import
	img2, _ := images.Create(ctx, cl.image, images.CreateOpts{Name: "staged", DiskFormat: "raw", ContainerFormat: "bare"}).Extract()
	if _, err := cl.image.Put(ctx, cl.image.ServiceURL("images", img2.ID, "stage"), nil, nil, &gophercloudRequestOpts204); err != nil {
		t.Fatal(err)
	}
	if err := imageimport.Create(ctx, cl.image, img2.ID, imageimport.CreateOpts{Name: imageimport.GlanceDirectMethod}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	waitImage(t, cl.image, img2.ID, "active")
	// a server boots from the imported disk
	s, err := servers.Create(ctx, cl.compute, servers.CreateOpts{Name: "imp", ImageRef: img.ID, FlavorRef: testFlavor, Networks: "auto"}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	waitServer(t, cl.compute, s.ID, "ACTIVE")
	servers.ForceDelete(ctx, cl.compute, s.ID)
	waitServerGone(t, cl.compute, s.ID)
	images.Delete(ctx, cl.image, img.ID)
	images.Delete(ctx, cl.image, img2.ID)
	l.assertClean()
}

var gophercloudRequestOpts204 = gophercloud.RequestOpts{OkCodes: []int{204}, MoreHeaders: map[string]string{"Content-Type": "application/octet-stream"}}
