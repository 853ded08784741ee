package cloud

import (
	"context"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
)

// os-set_image_metadata merges into volume_image_metadata, answers with
// the result, refuses what Cinder refuses, and an upload carries it into
// the image.
func TestVolumeSetImageMetadata(t *testing.T) {
	cl, vol := imageVolume(t)
	ctx := context.Background()
	var got struct {
		Metadata map[string]string `json:"metadata"`
	}
	res := volumes.SetImageMetadata(ctx, cl.volume, vol.ID, volumes.ImageMetadataOpts{Metadata: map[string]string{"image_type": "image", "site": "lab"}})
	if err := res.ExtractInto(&got); err != nil {
		t.Fatal(err)
	}
	if got.Metadata["image_type"] != "image" || got.Metadata["site"] != "lab" || got.Metadata["os_distro"] != "rocky" {
		t.Errorf("answer %v, want the merged image metadata", got.Metadata)
	}
	v, _ := volumes.Get(ctx, cl.volume, vol.ID).Extract()
	if v.VolumeImageMetadata["site"] != "lab" {
		t.Errorf("volume_image_metadata %v", v.VolumeImageMetadata)
	}
	for name, body := range map[string]map[string]string{
		"long value": {"k": strings.Repeat("x", 256)},
		"empty key":  {"": "v"},
	} {
		err := volumes.SetImageMetadata(ctx, cl.volume, vol.ID, volumes.ImageMetadataOpts{Metadata: body}).ExtractErr()
		if !gophercloud.ResponseCodeIs(err, 400) {
			t.Errorf("%s: %v, want 400", name, err)
		}
	}
	if err := volumes.SetImageMetadata(ctx, cl.volume, vol.ID, rawOpts{}).ExtractErr(); !gophercloud.ResponseCodeIs(err, 400) {
		t.Errorf("no metadata object: %v, want 400", err)
	}
	up, err := volumes.UploadImage(ctx, cl.volume, vol.ID, volumes.UploadImageOpts{ImageName: "from-vol", DiskFormat: "raw"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if err := volumes.SetImageMetadata(ctx, cl.volume, vol.ID, volumes.ImageMetadataOpts{Metadata: map[string]string{"late": "x"}}).ExtractErr(); !gophercloud.ResponseCodeIs(err, 400) {
		t.Errorf("while uploading: %v, want 400", err)
	}
	waitImage(t, cl.image, up.ImageID, "active")
	img, err := images.Get(ctx, cl.image, up.ImageID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if img.Properties["image_type"] != "image" || img.Properties["site"] != "lab" {
		t.Errorf("uploaded image properties %v", img.Properties)
	}
}

// imageVolume is an available volume made from the lab's image.
func imageVolume(t *testing.T) (clients, *volumes.Volume) {
	t.Helper()
	l := newLab(t, nil)
	cl := l.clients()
	vol, err := volumes.Create(context.Background(), cl.volume, volumes.CreateOpts{Size: 10, Name: "v", ImageID: l.imageID}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	waitVolume(t, cl.volume, vol.ID, "available")
	return cl, vol
}

// rawOpts sends {"os-set_image_metadata": {}}.
type rawOpts struct{}

func (rawOpts) ToImageMetadataMap() (map[string]any, error) {
	return map[string]any{"os-set_image_metadata": map[string]any{}}, nil
}

// An upload carrying Glance's reserved os_glance_* keys is refused;
// os-unset_image_metadata removes them (404 for a key the volume lacks).
func TestVolumeUnsetReservedImageMetadata(t *testing.T) {
	cl, vol := imageVolume(t)
	ctx := context.Background()
	if err := volumes.SetImageMetadata(ctx, cl.volume, vol.ID, volumes.ImageMetadataOpts{Metadata: map[string]string{"os_glance_failed_import": ""}}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	upload := func() error {
		_, err := volumes.UploadImage(ctx, cl.volume, vol.ID, volumes.UploadImageOpts{ImageName: "from-vol", DiskFormat: "raw"}).Extract()
		return err
	}
	if err := upload(); !gophercloud.ResponseCodeIs(err, 403) || !strings.Contains(err.Error(), "Attribute 'os_glance_failed_import' is reserved.") {
		t.Fatalf("upload with a reserved key: %v, want 403", err)
	}
	unset := func(key string) error {
		body := map[string]any{"os-unset_image_metadata": map[string]string{"key": key}}
		resp, err := cl.volume.Post(ctx, cl.volume.ServiceURL("volumes", vol.ID, "action"), body, nil, &gophercloud.RequestOpts{OkCodes: []int{200}})
		if resp != nil {
			_ = resp.Body.Close()
		}
		return err
	}
	if err := unset("os_glance_failed_import"); err != nil {
		t.Fatal(err)
	}
	if err := unset("os_glance_failed_import"); !gophercloud.ResponseCodeIs(err, 404) {
		t.Errorf("unset twice: %v, want 404", err)
	}
	if err := upload(); err != nil {
		t.Errorf("upload without reserved keys: %v", err)
	}
}
