package openstack

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// A volume made from an imported image carries Glance's reserved
// os_glance_* properties in its image metadata, which Cinder copies into
// the upload and Glance refuses (the official builder's issue #123): the
// build removes them from the volume first, and the image is made.
func TestBuildFromVolumeOfImportedImage(t *testing.T) {
	l := newLab(t, nil)
	disk := bytes.Repeat([]byte("rocky"), 1<<18)
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(disk) }))
	defer src.Close()
	b, art, ui, err := build(t, bg, l, nil, "source_image", nil,
		"external_source_image_url", src.URL+"/rocky.raw", "external_source_image_format", "raw",
		"use_blockstorage_volume", true, "volume_size", 1, "image_disk_format", "raw")
	if err != nil {
		t.Fatalf("build: %v\n%s", err, ui.errors())
	}
	if !slices.ContainsFunc(ui.says, func(s string) bool {
		return strings.Contains(s, "Removed Glance's reserved os_glance_failed_import, os_glance_importing_to_stores from the image metadata of volume")
	}) {
		t.Errorf("no word of the reserved keys removed: %q", ui.says)
	}
	img := l.getImage(t, b, art.Id())
	for k := range img.Properties {
		if strings.HasPrefix(k, "os_glance") {
			t.Errorf("image property %s", k)
		}
	}
	l.assertEmpty(t)
}
