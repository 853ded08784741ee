package cloud

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/backups"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/snapshots"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
)

// requireVolumeBackedSnapshot checks img is what Nova's createImage makes
// of a volume-backed server whose boot volume is volID, and returns the
// Cinder snapshot it names.
func requireVolumeBackedSnapshot(t *testing.T, cl clients, img *images.Image, volID string) string {
	t.Helper()
	if img.SizeBytes != 0 || img.Checksum != "" || img.Properties["bdm_v2"] != "True" || img.Properties["root_device_name"] != "/dev/vda" {
		t.Fatalf("volume-backed snapshot image: size %d checksum %q props %v", img.SizeBytes, img.Checksum, img.Properties)
	}
	var bdm []struct {
		SourceType      string `json:"source_type"`
		DestinationType string `json:"destination_type"`
		SnapshotID      string `json:"snapshot_id"`
		VolumeSize      int    `json:"volume_size"`
		BootIndex       int    `json:"boot_index"`
	}
	raw, _ := img.Properties["block_device_mapping"].(string)
	if err := json.Unmarshal([]byte(raw), &bdm); err != nil || len(bdm) != 1 || bdm[0].SourceType != "snapshot" ||
		bdm[0].DestinationType != "volume" || bdm[0].SnapshotID == "" || bdm[0].BootIndex != 0 {
		t.Fatalf("block_device_mapping %q: %v", raw, err)
	}
	sn, err := snapshots.Get(ctx, cl.volume, bdm[0].SnapshotID).Extract()
	if err != nil || sn.VolumeID != volID || sn.Status != "available" || sn.Size != bdm[0].VolumeSize {
		t.Fatalf("cinder snapshot %+v: %v", sn, err)
	}
	return sn.ID
}

// bootSnapshotImage boots the zero-byte image: Nova makes a new volume
// from the Cinder snapshot. Deleting the image leaves the snapshot, which
// must be deleted on its own (a leak the lab's status now shows).
func bootSnapshotImage(t *testing.T, l *lab, cl clients, imageID, snapID string) {
	t.Helper()
	s, err := servers.Create(ctx, cl.compute, servers.CreateOpts{Name: "from-bfv-snap", FlavorRef: testFlavor, Networks: "auto", ImageRef: imageID}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	got := waitServer(t, cl.compute, s.ID, "ACTIVE")
	if len(got.AttachedVolumes) != 1 {
		t.Fatalf("server from a volume-backed snapshot has volumes %+v", got.AttachedVolumes)
	}
	v := waitVolume(t, cl.volume, got.AttachedVolumes[0].ID, "in-use")
	if v.SnapshotID != snapID || v.Bootable != "true" {
		t.Fatalf("boot volume %+v, want one made from snapshot %s", v, snapID)
	}
	servers.Delete(ctx, cl.compute, s.ID)
	waitServerGone(t, cl.compute, s.ID)
	waitVolumeGone(t, cl.volume, v.ID)
	if err := images.Delete(ctx, cl.image, imageID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if st := l.c.Status(); len(st.Snapshots) != 1 || st.Snapshots[0].ID != snapID {
		t.Fatalf("after deleting the image the snapshot should remain: %+v", st.Snapshots)
	}
	if err := snapshots.Delete(ctx, cl.volume, snapID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5e9, "snapshot gone", func() (bool, error) {
		_, err := snapshots.Get(ctx, cl.volume, snapID).Extract()
		return gophercloud.ResponseCodeIs(err, 404), nil
	})
}

// TestVolumeSnapshotsAndBackups: snapshots and backups are real resources
// (the old lab listed none), they block their volume's deletion and show
// in Status so leak checks see them.
func TestVolumeSnapshotsAndBackups(t *testing.T) {
	l := newLab(t, nil)
	cl := l.clients()
	v, err := volumes.Create(ctx, cl.volume, volumes.CreateOpts{Size: 10, Name: "src", ImageID: l.imageID}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	waitVolume(t, cl.volume, v.ID, "available")
	sn, err := snapshots.Create(ctx, cl.volume, snapshots.CreateOpts{VolumeID: v.ID, Name: "snap-1"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	bk, err := backups.Create(ctx, cl.volume, backups.CreateOpts{VolumeID: v.ID, Name: "backup-1"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5e9, "snapshot and backup available", func() (bool, error) {
		s, err1 := snapshots.Get(ctx, cl.volume, sn.ID).Extract()
		b, err2 := backups.Get(ctx, cl.volume, bk.ID).Extract()
		if err1 != nil || err2 != nil {
			return false, nil
		}
		return s.Status == "available" && b.Status == "available", nil
	})
	pages, err := snapshots.List(cl.volume, snapshots.ListOpts{VolumeID: v.ID}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if all, _ := snapshots.ExtractSnapshots(pages); len(all) != 1 || all[0].Name != "snap-1" || all[0].Size != 10 {
		t.Fatalf("snapshots: %+v", all)
	}
	bpages, err := backups.ListDetail(cl.volume, backups.ListDetailOpts{}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if all, _ := backups.ExtractBackups(bpages); len(all) != 1 || all[0].VolumeID != v.ID {
		t.Fatalf("backups: %+v", all)
	}
	// a volume with snapshots cannot go (Cinder: 400)
	if err := volumes.Delete(ctx, cl.volume, v.ID, nil).ExtractErr(); !gophercloud.ResponseCodeIs(err, 400) || !strings.Contains(err.Error(), "dependent snapshots") {
		t.Fatalf("delete a volume with snapshots: %v", err)
	}
	// a volume made from the snapshot, not smaller than it
	if _, err := volumes.Create(ctx, cl.volume, volumes.CreateOpts{Size: 5, SnapshotID: sn.ID}, nil).Extract(); !gophercloud.ResponseCodeIs(err, 400) {
		t.Fatalf("volume smaller than its snapshot: %v", err)
	}
	v2, err := volumes.Create(ctx, cl.volume, volumes.CreateOpts{Size: 10, SnapshotID: sn.ID, Name: "from-snap"}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if got := waitVolume(t, cl.volume, v2.ID, "available"); got.SnapshotID != sn.ID {
		t.Fatalf("snapshot_id %q", got.SnapshotID)
	}
	if st := l.c.Status(); st.Counts["volume_snapshots"] != 1 || st.Counts["volume_backups"] != 1 {
		t.Fatalf("status: %+v", st.Counts)
	}
	for _, del := range []error{
		volumes.Delete(ctx, cl.volume, v2.ID, nil).ExtractErr(),
		snapshots.Delete(ctx, cl.volume, sn.ID).ExtractErr(),
		backups.Delete(ctx, cl.volume, bk.ID).ExtractErr(),
	} {
		if del != nil {
			t.Fatal(del)
		}
	}
	waitFor(t, 5e9, "snapshot gone", func() (bool, error) {
		_, err := snapshots.Get(ctx, cl.volume, sn.ID).Extract()
		return gophercloud.ResponseCodeIs(err, 404), nil
	})
	if err := volumes.Delete(ctx, cl.volume, v.ID, nil).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	waitVolumeGone(t, cl.volume, v.ID)
	waitVolumeGone(t, cl.volume, v2.ID)
	l.assertClean()
}

// TestZeroDiskFlavorAndMinDisk: Nova refuses an image-backed server on a
// flavor with a 0 GB root disk to non-admins, and a boot volume smaller
// than the image's min_disk. The old lab booted both.
func TestZeroDiskFlavorAndMinDisk(t *testing.T) {
	l := newLab(t, nil)
	l.c.AddFlavor(Flavor{ID: "zero", Name: "m1.zero", VCPUs: 1, RAM: 1024, Disk: 0})
	cl := l.clients()
	_, err := servers.Create(ctx, cl.compute, servers.CreateOpts{Name: "zero", FlavorRef: "zero", Networks: "auto", ImageRef: l.imageID}, nil).Extract()
	if !gophercloud.ResponseCodeIs(err, 403) || !strings.Contains(err.Error(), "zero disk") {
		t.Fatalf("image-backed on a zero-disk flavor: %v", err)
	}
	_, err = servers.Create(ctx, cl.compute, servers.CreateOpts{Name: "small", FlavorRef: "zero", Networks: "auto",
		BlockDevice: []servers.BlockDevice{{SourceType: servers.SourceImage, UUID: l.imageID, DestinationType: servers.DestinationVolume,
			VolumeSize: 5, DeleteOnTermination: true, BootIndex: 0}}}, nil).Extract()
	if !gophercloud.ResponseCodeIs(err, 400) || !strings.Contains(err.Error(), "minimum size") {
		t.Fatalf("boot volume below min_disk: %v", err)
	}
	l.assertClean()
}
