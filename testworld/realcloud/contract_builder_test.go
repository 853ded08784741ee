//go:build realcloud

package realcloud

// The contract of what builder/openstack reads from the cloud and that a
// guest need not boot for: the server's states and fault, keypairs, the
// addresses Nova reports, security group rules, metadata, createImage and
// os-volume_upload_image answers, image properties and membership. Each
// check fails if either side changes a field name, a status sequence or
// an error code the builder relies on.

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/members"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"golang.org/x/crypto/ssh"
)

func init() { contractChecks = append(contractChecks, builderChecks...) }

// contractWait bounds one state change: the tier's Python services on a
// shared 2-core machine take seconds, the double milliseconds.
const contractWait = 4 * time.Minute

// waitFor polls get until done, recording each new status in order.
func waitFor(t *testing.T, what string, get func() (string, error), done func(string) bool) []string {
	t.Helper()
	var seen []string
	deadline := time.Now().Add(contractWait)
	for {
		st, err := get()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if len(seen) == 0 || seen[len(seen)-1] != st {
			seen = append(seen, st)
		}
		if done(st) {
			return seen
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still %v after %s", what, seen, contractWait)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// wantSequence wants seen to be a run of each of want in order, every
// one but the first optional (a poll may miss a short state), the last
// one present.
func wantSequence(t *testing.T, what string, seen, want []string) {
	t.Helper()
	re := "^" + want[0] + "(," + strings.Join(want[1:len(want)-1], ")?(,") + ")?," + want[len(want)-1] + "$"
	if len(want) == 2 {
		re = "^" + want[0] + "," + want[1] + "$"
	}
	if !regexp.MustCompile(re).MatchString(strings.Join(seen, ",")) {
		t.Errorf("%s: statuses %v, want %v", what, seen, want)
	}
}

func serverStatus(cc *gophercloud.ServiceClient, id string) func() (string, error) {
	return func() (string, error) {
		s, err := servers.Get(context.Background(), cc, id).Extract()
		if err != nil {
			return "", err
		}
		return s.Status, nil
	}
}

// newServer boots a server of the base image on the tenant network as
// the builder does, deleted (and waited gone) at the end.
func (tg target) newServer(t *testing.T, meta map[string]string, keyName string) *servers.Server {
	t.Helper()
	opts := servers.CreateOpts{Name: uniqueName("contract"), FlavorRef: "1",
		ImageRef: findImage(t, tg.client(t, openstack.NewImageV2), tg.base).ID, Metadata: meta,
		Networks: []servers.Network{{UUID: networkNamed(t, tg.client(t, openstack.NewNetworkV2), tg.tenant)}}}
	if tg.failSpawn != nil && meta[failSpawnKey] == "true" {
		tg.failSpawn(t, opts.Name)
	}
	return tg.create(t, opts, keyName)
}

// create is the server opts describe, with keyName's keypair, deleted
// (and waited gone) at the end.
func (tg target) create(t *testing.T, opts servers.CreateOpts, keyName string) *servers.Server {
	t.Helper()
	ctx := context.Background()
	cc := tg.client(t, openstack.NewComputeV2)
	var b servers.CreateOptsBuilder = opts
	if keyName != "" {
		b = keypairs.CreateOptsExt{CreateOptsBuilder: opts, KeyName: keyName}
	}
	s, err := servers.Create(ctx, cc, b, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := servers.Delete(ctx, cc, s.ID).ExtractErr(); err != nil && !gophercloud.ResponseCodeIs(err, 404) {
			t.Errorf("deleting server %s: %v", s.ID, err)
			return
		}
		waitGone(t, "server "+s.ID, func() error { return servers.Get(ctx, cc, s.ID).Err })
	})
	return s
}

// failSpawnKey is the metadata the tier's Nova driver fails a spawn on
// (python/fatcloud/nova_driver.py); the double gets a server_error fault.
const failSpawnKey = "realcloud_fail_spawn"

// pubKeys are an ed25519 (the builder's default) and an RSA public key
// in authorized_keys form.
func pubKeys(t *testing.T) map[string]string {
	t.Helper()
	ed, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for name, k := range map[string]any{"ed25519": ed, "rsa": &rk.PublicKey} {
		pk, err := ssh.NewPublicKey(k)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pk)))
	}
	return out
}

var md5Fingerprint = regexp.MustCompile(`^([0-9a-f]{2}:){15}[0-9a-f]{2}$`)

// addressesOf is Nova's addresses of the server, re-read until one of
// type kind is there.
func addressesOf(t *testing.T, cc *gophercloud.ServiceClient, id, kind string) map[string]any {
	t.Helper()
	var addrs map[string]any
	waitFor(t, "an address of type "+kind, func() (string, error) {
		s, err := servers.Get(context.Background(), cc, id).Extract()
		if err != nil {
			return "", err
		}
		addrs = s.Addresses
		return fmt.Sprint(strings.Contains(fmt.Sprint(addrs), "OS-EXT-IPS:type:"+kind)), nil
	}, func(s string) bool { return s == "true" })
	return addrs
}

// wantAddress wants net's list in addrs to hold an entry of type kind
// with addr (any when ""), in the form pickAddress reads: version 4, the
// address, OS-EXT-IPS:type and OS-EXT-IPS-MAC:mac_addr.
func wantAddress(t *testing.T, addrs map[string]any, net, kind, addr, mac string) {
	t.Helper()
	list, ok := addrs[net].([]any)
	if !ok {
		t.Fatalf("addresses have no list for network %s: %v", net, addrs)
	}
	for _, raw := range list {
		a, _ := raw.(map[string]any)
		if a["OS-EXT-IPS:type"] != kind || (addr != "" && a["addr"] != addr) {
			continue
		}
		if v, _ := a["version"].(float64); v != 4 || a["OS-EXT-IPS-MAC:mac_addr"] != mac || len(a) != 4 {
			t.Errorf("the %s address %v is not {addr, version 4, OS-EXT-IPS:type, OS-EXT-IPS-MAC:mac_addr %s}", kind, a, mac)
		}
		return
	}
	t.Errorf("no %s address %s on network %s: %v", kind, addr, net, addrs)
}

var builderChecks = []struct {
	name  string
	check func(*testing.T, target)
}{
	{"nova/keypair-import-delete", checkKeypairs},
	{"nova/server-build-active-shutoff-snapshot", checkServerLifecycle},
	{"nova/failed-spawn-error-fault", checkFailedSpawn},
	{"neutron/security-group-rules", checkSecurityGroupRules},
	{"glance/image-properties", checkImageProperties},
	{"glance/membership-accept", checkMembership},
	{"cinder/volume-upload-image", checkVolumeUpload},
}

func checkKeypairs(t *testing.T, tg target) {
	ctx := context.Background()
	cc := tg.client(t, openstack.NewComputeV2)
	for kind, pub := range pubKeys(t) {
		name := uniqueName("contract-" + kind)
		kp, err := keypairs.Create(ctx, cc, keypairs.CreateOpts{Name: name, PublicKey: pub}).Extract()
		if err != nil {
			t.Fatalf("importing an %s key: %v", kind, err)
		}
		if kp.Name != name || strings.TrimSpace(kp.PublicKey) != pub || kp.PrivateKey != "" || !md5Fingerprint.MatchString(kp.Fingerprint) {
			t.Errorf("the %s import's answer: %+v", kind, kp)
		}
		// findKeyPair adopts a keypair by name whose public key is ours
		got, err := keypairs.Get(ctx, cc, name, nil).Extract()
		if err != nil || strings.TrimSpace(got.PublicKey) != pub || got.Fingerprint != kp.Fingerprint {
			t.Errorf("GET the %s keypair: %+v %v", kind, got, err)
		}
		_, err = keypairs.Create(ctx, cc, keypairs.CreateOpts{Name: name, PublicKey: pub}).Extract()
		wantCode(t, "importing "+name+" again", err, 409)
		if err := keypairs.Delete(ctx, cc, name, nil).ExtractErr(); err != nil {
			t.Errorf("deleting the %s keypair: %v", kind, err)
		}
		_, err = keypairs.Get(ctx, cc, name, nil).Extract()
		wantCode(t, "GET a deleted keypair", err, 404)
		// StepKeyPair's Cleanup takes 404 as already gone
		wantCode(t, "deleting a deleted keypair", keypairs.Delete(ctx, cc, name, nil).ExtractErr(), 404)
	}
	_, err := keypairs.Create(ctx, cc, keypairs.CreateOpts{Name: uniqueName("contract-bad"), PublicKey: "ssh-ed25519 notbase64"}).Extract()
	wantCode(t, "importing a malformed key", err, 400)
}

func checkServerLifecycle(t *testing.T, tg target) {
	ctx := context.Background()
	cc, nc := tg.client(t, openstack.NewComputeV2), tg.client(t, openstack.NewNetworkV2)
	kpName := uniqueName("contract-kp")
	if _, err := keypairs.Create(ctx, cc, keypairs.CreateOpts{Name: kpName, PublicKey: pubKeys(t)["ed25519"]}).Extract(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { keypairs.Delete(ctx, cc, kpName, nil) })
	meta := map[string]string{"ansible_init_disable": "true", "packer_build_id": "contract-build"}
	s := tg.newServer(t, meta, kpName)
	seen := waitFor(t, "the new server", serverStatus(cc, s.ID), func(st string) bool { return st == "ACTIVE" || st == "ERROR" })
	wantSequence(t, "boot", seen, []string{"BUILD", "ACTIVE"})
	got, err := servers.Get(ctx, cc, s.ID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	// the sweep and the lost-answer search find a build's server by these
	if len(got.Metadata) != len(meta) || got.Metadata["ansible_init_disable"] != "true" || got.Metadata["packer_build_id"] != "contract-build" {
		t.Errorf("the server's metadata: %v, want %v", got.Metadata, meta)
	}
	if got.KeyName != kpName {
		t.Errorf("key_name %q, want %q", got.KeyName, kpName)
	}
	if sg := fmt.Sprint(got.SecurityGroups); sg != "[map[name:default]]" {
		t.Errorf("security_groups %s, want [{name: default}]", sg)
	}
	checkAddresses(t, tg, cc, nc, s.ID)
	if err := servers.Stop(ctx, cc, s.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	seen = waitFor(t, "the stopped server", serverStatus(cc, s.ID), func(st string) bool { return st == "SHUTOFF" })
	wantSequence(t, "stop", seen, []string{"ACTIVE", "SHUTOFF"})
	checkSnapshot(t, tg, cc, s.ID)
}

// checkAddresses associates a floating IP with the server's port as
// StepFloatingIP does and wants Nova's addresses to show it.
func checkAddresses(t *testing.T, tg target, cc, nc *gophercloud.ServiceClient, serverID string) {
	ctx := context.Background()
	pages, err := ports.List(nc, ports.ListOpts{DeviceID: serverID}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := ports.ExtractPorts(pages)
	if len(ps) != 1 || len(ps[0].FixedIPs) != 1 {
		t.Fatalf("the server's ports: %+v", ps)
	}
	p := ps[0]
	wantAddress(t, addressesOf(t, cc, serverID, "fixed"), tg.tenant, "fixed", p.FixedIPs[0].IPAddress, p.MACAddress)
	fip, err := floatingips.Create(ctx, nc, floatingips.CreateOpts{FloatingNetworkID: networkNamed(t, nc, tg.external)}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { floatingips.Delete(ctx, nc, fip.ID) })
	fip, err = floatingips.Update(ctx, nc, fip.ID, floatingips.UpdateOpts{PortID: &p.ID}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if fip.PortID != p.ID || fip.FixedIP != p.FixedIPs[0].IPAddress {
		t.Errorf("the associated floating IP: %+v", fip)
	}
	wantAddress(t, addressesOf(t, cc, serverID, "floating"), tg.tenant, "floating", fip.FloatingIP, p.MACAddress)
}

// checkSnapshot is createImage of the stopped server as StepCreateImage
// calls it, and the image's path to active.
func checkSnapshot(t *testing.T, tg target, cc *gophercloud.ServiceClient, serverID string) {
	ctx := context.Background()
	ic := tg.client(t, openstack.NewImageV2)
	name := uniqueName("contract-snap")
	res := servers.CreateImage(ctx, cc, serverID, servers.CreateImageOpts{Name: name, Metadata: map[string]string{"packer_build_id": "contract-build"}})
	id, err := res.ExtractImageID()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteImage(t, ic, id) })
	// the builder asks for no microversion: the id comes in Location
	// (from 2.45 on it would be the body's image_id)
	if loc := res.Header.Get("Location"); !strings.HasSuffix(loc, "/images/"+id) {
		t.Errorf("createImage's Location %q does not name image %s", loc, id)
	}
	seen := waitFor(t, "the snapshot", func() (string, error) {
		im, err := images.Get(ctx, ic, id).Extract()
		if err != nil {
			return "", err
		}
		return string(im.Status), nil
	}, func(st string) bool { return st == "active" || st == "killed" || st == "deleted" })
	wantSequence(t, "snapshot", seen, []string{"queued", "saving", "active"})
	im, err := images.Get(ctx, ic, id).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if im.Name != name || im.Properties["packer_build_id"] != "contract-build" || im.Properties["image_type"] != "snapshot" ||
		im.Properties["instance_uuid"] != serverID || im.SizeBytes == 0 {
		t.Errorf("the snapshot: name %s size %d properties %v", im.Name, im.SizeBytes, im.Properties)
	}
}

func checkFailedSpawn(t *testing.T, tg target) {
	cc := tg.client(t, openstack.NewComputeV2)
	s := tg.newServer(t, map[string]string{failSpawnKey: "true"}, "")
	seen := waitFor(t, "the failing server", serverStatus(cc, s.ID), func(st string) bool { return st == "ACTIVE" || st == "ERROR" })
	wantSequence(t, "a failed spawn", seen, []string{"BUILD", "ERROR"})
	got, err := servers.Get(context.Background(), cc, s.ID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	// serverFault reports message and code
	// serverFault shows message and code: the message carries the
	// hypervisor's reason; details (a traceback) are for admins only
	if f := got.Fault; f.Code != 500 || !strings.HasPrefix(f.Message, "Failed to deploy instance: ") ||
		!strings.Contains(f.Message, failSpawnKey) || f.Details != "" || f.Created.IsZero() {
		t.Errorf("the fault: %+v, want code 500, \"Failed to deploy instance: <reason>\", created, no details", f)
	}
}

// checkSecurityGroupRules reads the default group, the one a build's
// server gets without security_groups, as the API shows its rules. The
// builder creates no group or rule: only names go into the server.
func checkSecurityGroupRules(t *testing.T, tg target) {
	ctx := context.Background()
	nc := tg.client(t, openstack.NewNetworkV2)
	pages, err := groups.List(nc, groups.ListOpts{Name: "default", ProjectID: tg.project}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := groups.ExtractGroups(pages)
	if len(all) != 1 {
		t.Fatalf("the project's default groups: %d", len(all))
	}
	g := all[0]
	var got []string
	for _, r := range g.Rules {
		remote := r.RemoteGroupID
		if remote == g.ID {
			remote = "self"
		}
		got = append(got, fmt.Sprintf("%s/%s/%q/%d-%d/%q/%s", r.Direction, r.EtherType, r.Protocol, r.PortRangeMin, r.PortRangeMax, r.RemoteIPPrefix, remote))
	}
	sort.Strings(got)
	want := `egress/IPv4/""/0-0/""/ egress/IPv6/""/0-0/""/ ingress/IPv4/""/0-0/""/self ingress/IPv6/""/0-0/""/self`
	if strings.Join(got, " ") != want {
		t.Errorf("the default group's rules:\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
	again, err := groups.Get(ctx, nc, g.ID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range again.Rules {
		if i >= len(g.Rules) || r.ID != g.Rules[i].ID {
			t.Errorf("the rules' ids change between reads: %+v vs %+v", again.Rules, g.Rules)
			break
		}
	}
	_, err = rules.Get(ctx, nc, "0b7e1c5a-6a4f-4c53-9d8a-2a4b7f3c9e10").Extract()
	wantCode(t, "GET a missing rule", err, 404)
}

func checkImageProperties(t *testing.T, tg target) {
	ctx := context.Background()
	ic := tg.client(t, openstack.NewImageV2)
	im := tg.newImage(t, ic)
	// StepUpdateImage: add, then replace, then remove a property
	up, err := images.Update(ctx, ic, im.ID, images.UpdateOpts{
		images.UpdateImageProperty{Op: images.AddOp, Name: "packer_build_id", Value: "one"},
		images.UpdateImageProperty{Op: images.AddOp, Name: "os_distro", Value: "rocky"},
	}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if up.Properties["packer_build_id"] != "one" || up.Properties["os_distro"] != "rocky" {
		t.Errorf("properties after add: %v", up.Properties)
	}
	up, err = images.Update(ctx, ic, im.ID, images.UpdateOpts{
		images.UpdateImageProperty{Op: images.ReplaceOp, Name: "packer_build_id", Value: "two"},
		images.UpdateImageProperty{Op: images.RemoveOp, Name: "os_distro"},
	}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if _, left := up.Properties["os_distro"]; left || up.Properties["packer_build_id"] != "two" {
		t.Errorf("properties after replace and remove: %v", up.Properties)
	}
	// an image is found by a property as a list filter
	pages, err := images.List(ic, propertyIs{"packer_build_id", "two"}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := images.ExtractImages(pages)
	if len(all) != 1 || all[0].ID != im.ID {
		t.Errorf("images with packer_build_id=two: %d", len(all))
	}
	_, err = images.Update(ctx, ic, im.ID, images.UpdateOpts{images.UpdateImageProperty{Op: images.AddOp, Name: "status", Value: "x"}}).Extract()
	wantCode(t, "setting a reserved property", err, 403)
}

// propertyIs lists images by one property as buildImages does: Glance
// filters on any property given as a query parameter.
type propertyIs struct{ key, value string }

func (p propertyIs) ToImageListQuery() (string, error) {
	return "?" + url.Values{p.key: {p.value}}.Encode(), nil
}

func checkMembership(t *testing.T, tg target) {
	ctx := context.Background()
	ic := tg.client(t, openstack.NewImageV2)
	im := tg.newImage(t, ic)
	m, err := members.Create(ctx, ic, im.ID, tg.shareProject).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != "pending" || m.MemberID != tg.shareProject || m.ImageID != im.ID {
		t.Errorf("the new member: %+v", m)
	}
	_, err = members.Create(ctx, ic, im.ID, tg.shareProject).Extract()
	wantCode(t, "adding the member again", err, 409)
	// acceptMembership re-scopes the build's token to the member project
	p, err := openstack.NewClient(tg.member.IdentityEndpoint)
	if err != nil {
		t.Fatal(err)
	}
	if err := openstack.Authenticate(ctx, p, gophercloud.AuthOptions{IdentityEndpoint: tg.member.IdentityEndpoint,
		TokenID: tg.member.Token(), Scope: &gophercloud.AuthScope{ProjectID: tg.shareProject}}); err != nil {
		t.Fatalf("re-scoping to the share project: %v", err)
	}
	sc := clientOf(t, p, openstack.NewImageV2)
	m, err = members.Update(ctx, sc, im.ID, tg.shareProject, members.UpdateOpts{Status: "accepted"}).Extract()
	if err != nil || m.Status != "accepted" {
		t.Fatalf("the member accepting: %+v %v", m, err)
	}
	m, err = members.Get(ctx, ic, im.ID, tg.shareProject).Extract()
	if err != nil || m.Status != "accepted" {
		t.Errorf("the owner reading the member: %+v %v", m, err)
	}
	if _, err := images.Get(ctx, sc, im.ID).Extract(); err != nil {
		t.Errorf("the member reading the image: %v", err)
	}
}

func checkVolumeUpload(t *testing.T, tg target) {
	ctx := context.Background()
	bc, ic := tg.client(t, openstack.NewBlockStorageV3), tg.client(t, openstack.NewImageV2)
	v, err := volumes.Create(ctx, bc, volumes.CreateOpts{Size: 1, Name: uniqueName("contract-vol")}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteVolume(t, bc, v.ID) })
	volStatus := func() (string, error) {
		v, err := volumes.Get(ctx, bc, v.ID).Extract()
		if err != nil {
			return "", err
		}
		return v.Status, nil
	}
	seen := waitFor(t, "the volume", volStatus, func(st string) bool { return st == "available" || st == "error" })
	// the create's answer is the first status (Cinder's file driver is
	// done before the first GET)
	if seen[0] != v.Status {
		seen = append([]string{v.Status}, seen...)
	}
	wantSequence(t, "a new volume", seen, []string{"creating", "available"})
	meta := map[string]string{"packer_build_id": "contract-build", "hw_disk_bus": "scsi"}
	if err := volumes.SetImageMetadata(ctx, bc, v.ID, volumes.ImageMetadataOpts{Metadata: meta}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	got, err := volumes.Get(ctx, bc, v.ID).Extract()
	if err != nil || got.VolumeImageMetadata["packer_build_id"] != "contract-build" || got.VolumeImageMetadata["hw_disk_bus"] != "scsi" {
		t.Errorf("volume_image_metadata after os-set_image_metadata: %v %v", got.VolumeImageMetadata, err)
	}
	name := uniqueName("contract-upload")
	res := volumes.UploadImage(ctx, bc, v.ID, volumes.UploadImageOpts{ImageName: name, DiskFormat: "raw", ContainerFormat: "bare"})
	up, err := res.Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteImage(t, ic, up.ImageID) })
	if up.ImageID == "" || up.ImageName != name || up.DiskFormat != "raw" || up.ContainerFormat != "bare" || up.Status != "uploading" {
		t.Errorf("os-volume_upload_image's answer: %v", res.Body)
	}
	// the volume is busy until Glance has the bytes
	if st, err := volStatus(); err != nil || st != "uploading" {
		t.Errorf("the volume after os-volume_upload_image: %s %v, want uploading", st, err)
	}
	seen = waitFor(t, "the uploaded image", func() (string, error) {
		im, err := images.Get(ctx, ic, up.ImageID).Extract()
		if err != nil {
			return "", err
		}
		return string(im.Status), nil
	}, func(st string) bool { return st == "active" || st == "killed" || st == "deleted" })
	// Cinder creates the image queued and starts the upload at once: the
	// first GET may see it saving already
	if seen[0] == "queued" {
		seen = seen[1:]
	}
	wantSequence(t, "a volume upload", seen, []string{"saving", "active"})
	// Cinder copies the volume's image metadata into the image
	im, err := images.Get(ctx, ic, up.ImageID).Extract()
	if err != nil || im.Properties["packer_build_id"] != "contract-build" || im.Properties["hw_disk_bus"] != "scsi" {
		t.Errorf("the uploaded image's properties: %v %v", im, err)
	}
	waitFor(t, "the volume after the upload", volStatus, func(st string) bool { return st == "available" || st == "error" })
}

func deleteVolume(t *testing.T, bc *gophercloud.ServiceClient, id string) {
	ctx := context.Background()
	if err := volumes.Delete(ctx, bc, id, nil).ExtractErr(); err != nil && !gophercloud.ResponseCodeIs(err, 404) {
		t.Errorf("deleting volume %s: %v", id, err)
		return
	}
	waitGone(t, "volume "+id, func() error { return volumes.Get(ctx, bc, id).Err })
}

// waitGone waits for get to answer 404 (a delete is done).
func waitGone(t *testing.T, what string, get func() error) {
	t.Helper()
	deadline := time.Now().Add(contractWait)
	for time.Now().Before(deadline) {
		if gophercloud.ResponseCodeIs(get(), 404) {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Errorf("%s is not gone after %s", what, contractWait)
}
