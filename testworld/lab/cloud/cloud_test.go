package cloud

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"golang.org/x/crypto/ssh"
)

var ctx = context.Background()

func TestAuthMethods(t *testing.T) {
	l := newLab(t, func(o *Options) {
		o.Users = append(o.Users, User{Name: "ops", Password: "pw", Project: "ops", Domain: "Lab"})
	})
	po := l.provider(gophercloud.AuthOptions{Username: "ops", Password: "pw", DomainName: "Lab", TenantName: "ops"})
	if po.Token() == "" {
		t.Fatal("no token for user in domain Lab")
	}
	// password, by names
	p := l.provider(l.pwOpts())
	if p.Token() == "" {
		t.Fatal("no token")
	}
	// application credential by id+secret
	pa := l.provider(gophercloud.AuthOptions{ApplicationCredentialID: "appcred-id-1", ApplicationCredentialSecret: "s3cret"})
	// application credential by name + user
	l.provider(gophercloud.AuthOptions{ApplicationCredentialName: "ci", ApplicationCredentialSecret: "s3cret", Username: "lab", DomainName: "Default"})
	// token validation
	idc, err := openstack.NewIdentityV3(pa, gophercloud.EndpointOpts{})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokens.Get(ctx, idc, p.Token()).ExtractToken()
	if err != nil || tok.ExpiresAt.Before(time.Now()) {
		t.Fatalf("validate: %v %v", tok, err)
	}
	proj, err := tokens.Get(ctx, idc, p.Token()).ExtractProject()
	if err != nil || proj.Name != "lab" {
		t.Fatalf("project %+v %v", proj, err)
	}
	// by ids
	var uid string
	if u, err := tokens.Get(ctx, idc, p.Token()).ExtractUser(); err == nil {
		uid = u.ID
	}
	l.provider(gophercloud.AuthOptions{UserID: uid, Password: "lab-password", TenantID: proj.ID})
	// wrong password / secret
	for _, o := range []gophercloud.AuthOptions{
		{Username: "lab", Password: "nope", DomainName: "Default", TenantName: "lab"},
		{ApplicationCredentialID: "appcred-id-1", ApplicationCredentialSecret: "bad"},
		{Username: "lab", Password: "lab-password", DomainName: "Default", TenantName: "other"},
		{Username: "ops", Password: "pw", DomainName: "Default", TenantName: "ops"},
	} {
		o.IdentityEndpoint = l.c.AuthURL()
		_, err := openstack.AuthenticatedClient(ctx, o)
		if !gophercloud.ResponseCodeIs(err, http.StatusUnauthorized) {
			t.Errorf("expected 401, got %v", err)
		}
	}
	// unknown token on another service -> 401 with keystone shape
	req, _ := http.NewRequest("GET", l.c.URL()+"/compute/v2.1/flavors", nil)
	req.Header.Set("X-Auth-Token", "bogus")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("bogus token: %d", resp.StatusCode)
	}
	// version documents
	for _, u := range []string{"/identity/", "/identity/v3", "/compute/", "/compute/v2.1", "/image/", "/image/versions", "/networking/", "/volume/", "/volume/v3/"} {
		resp, err := http.Get(l.c.URL() + u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 && resp.StatusCode != 300 {
			t.Errorf("%s: %d", u, resp.StatusCode)
		}
	}
}

func TestTokenExpiryReauth(t *testing.T) {
	l := newLab(t, func(o *Options) { o.TokenTTL = time.Second })
	cl := l.clients()
	list := func() {
		t.Helper()
		pages, err := flavors.ListDetail(cl.compute, nil).AllPages(ctx)
		if err != nil {
			t.Fatal(err)
		}
		fs, _ := flavors.ExtractFlavors(pages)
		if len(fs) != 2 {
			t.Fatalf("flavors: %d", len(fs))
		}
	}
	list()
	before := l.c.Calls()["identity"]
	old := cl.compute.ProviderClient.Token()
	// wait until the cloud refuses the first token, rather than for its TTL
	waitFor(t, 5*time.Second, "the first token to expire", func() (bool, error) {
		req, err := http.NewRequest(http.MethodGet, cl.compute.Endpoint+"flavors", nil)
		if err != nil {
			return false, err
		}
		req.Header.Set("X-Auth-Token", old)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, err
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusUnauthorized, nil
	})
	list()
	if l.c.Calls()["identity"] <= before || cl.compute.ProviderClient.Token() == old {
		t.Fatal("client did not re-authenticate")
	}
}

func waitServer(t *testing.T, c *gophercloud.ServiceClient, id, status string) *servers.Server {
	t.Helper()
	var s *servers.Server
	waitFor(t, 5*time.Second, "server "+status, func() (bool, error) {
		var err error
		s, err = servers.Get(ctx, c, id).Extract()
		if err != nil {
			return false, err
		}
		if s.Status == "ERROR" && status != "ERROR" {
			return false, errors.New("server went to ERROR")
		}
		return s.Status == status && s.TaskState == "", nil
	})
	return s
}

func waitServerGone(t *testing.T, c *gophercloud.ServiceClient, id string) {
	t.Helper()
	waitFor(t, 5*time.Second, "server gone", func() (bool, error) {
		_, err := servers.Get(ctx, c, id).Extract()
		if gophercloud.ResponseCodeIs(err, 404) {
			return true, nil
		}
		return false, err
	})
}

func waitImage(t *testing.T, c *gophercloud.ServiceClient, id, status string) *images.Image {
	t.Helper()
	var img *images.Image
	waitFor(t, 5*time.Second, "image "+status, func() (bool, error) {
		var err error
		img, err = images.Get(ctx, c, id).Extract()
		if err != nil {
			return false, err
		}
		if img.Status == images.ImageStatusKilled && status != "killed" {
			return false, errors.New("image killed")
		}
		return string(img.Status) == status, nil
	})
	return img
}

func waitVolume(t *testing.T, c *gophercloud.ServiceClient, id, status string) *volumes.Volume {
	t.Helper()
	var v *volumes.Volume
	waitFor(t, 5*time.Second, "volume "+status, func() (bool, error) {
		var err error
		v, err = volumes.Get(ctx, c, id).Extract()
		if err != nil {
			return false, err
		}
		return v.Status == status, nil
	})
	return v
}

func waitVolumeGone(t *testing.T, c *gophercloud.ServiceClient, id string) {
	t.Helper()
	waitFor(t, 5*time.Second, "volume gone", func() (bool, error) {
		_, err := volumes.Get(ctx, c, id).Extract()
		if gophercloud.ResponseCodeIs(err, 404) {
			return true, nil
		}
		return false, err
	})
}

func labNet(t *testing.T, c *gophercloud.ServiceClient) networks.Network {
	t.Helper()
	pages, err := networks.List(c, networks.ListOpts{Name: "lab-net"}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ns, err := networks.ExtractNetworks(pages)
	if err != nil || len(ns) != 1 {
		t.Fatalf("networks: %v %v", ns, err)
	}
	return ns[0]
}

func TestServerLifecycle(t *testing.T) {
	l := newLab(t, nil)
	cl := l.clients()
	cl.compute.Microversion = "2.79"

	// keypairs: generated and imported
	kp, err := keypairs.Create(ctx, cl.compute, keypairs.CreateOpts{Name: "gen"}).Extract()
	if err != nil || !strings.Contains(kp.PrivateKey, "PRIVATE KEY") {
		t.Fatalf("keypair: %+v %v", kp, err)
	}
	if _, err := ssh.ParsePrivateKey([]byte(kp.PrivateKey)); err != nil {
		t.Fatalf("private key: %v", err)
	}
	kp2, err := keypairs.Create(ctx, cl.compute, keypairs.CreateOpts{Name: "imp", PublicKey: kp.PublicKey}).Extract()
	if err != nil || kp2.PrivateKey != "" || kp2.Fingerprint != kp.Fingerprint {
		t.Fatalf("import: %+v %v", kp2, err)
	}
	if _, err := keypairs.Create(ctx, cl.compute, keypairs.CreateOpts{Name: "imp", PublicKey: kp.PublicKey}).Extract(); !gophercloud.ResponseCodeIs(err, 409) {
		t.Fatalf("dup keypair: %v", err)
	}
	pages, _ := keypairs.List(cl.compute, nil).AllPages(ctx)
	kps, _ := keypairs.ExtractKeyPairs(pages)
	if len(kps) != 2 {
		t.Fatalf("keypairs: %d", len(kps))
	}
	if g, err := keypairs.Get(ctx, cl.compute, "gen", nil).Extract(); err != nil || g.PublicKey != kp.PublicKey {
		t.Fatalf("get keypair: %v", err)
	}

	net := labNet(t, cl.network)
	s, err := servers.Create(ctx, cl.compute, keypairs.CreateOptsExt{CreateOptsBuilder: servers.CreateOpts{
		Name: "packer-build_1", ImageRef: l.imageID, FlavorRef: testFlavor, Metadata: map[string]string{"role": "build"},
		UserData: []byte("#cloud-config\n"), Networks: []servers.Network{{UUID: net.ID}}, SecurityGroups: []string{"default"},
	}, KeyName: "gen"}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	got, _ := servers.Get(ctx, cl.compute, s.ID).Extract()
	if got.Status != "BUILD" {
		t.Fatalf("expected BUILD first, got %s", got.Status)
	}
	got = waitServer(t, cl.compute, s.ID, "ACTIVE")
	if got.Image["id"] != l.imageID || got.KeyName != "gen" || got.Metadata["role"] != "build" || got.PowerState != servers.RUNNING {
		t.Fatalf("server: %+v", got)
	}
	addrs, _ := got.Addresses["lab-net"].([]any)
	if len(addrs) != 1 {
		t.Fatalf("addresses: %v", got.Addresses)
	}
	fixed := addrs[0].(map[string]any)["addr"].(string)
	md := l.c.MetadataFor(fixed)
	if md == nil || md.UUID != s.ID || string(md.UserData) != "#cloud-config\n" || md.PublicKeys["gen"] != kp.PublicKey || md.Hostname != "packer-build-1" {
		t.Fatalf("metadata: %+v", md)
	}
	if spec, _ := l.hv.spec(s.ID); spec.FixedIP != fixed {
		t.Fatalf("spec: %+v", spec)
	}
	// list with filters
	pages, err = servers.List(cl.compute, servers.ListOpts{Name: "^packer-", Status: "ACTIVE"}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ss, _ := servers.ExtractServers(pages)
	if len(ss) != 1 || ss[0].ID != s.ID {
		t.Fatalf("list: %v", ss)
	}
	pages, _ = servers.List(cl.compute, servers.ListOpts{Name: "nomatch"}).AllPages(ctx)
	if ss, _ := servers.ExtractServers(pages); len(ss) != 0 {
		t.Fatal("filter")
	}
	// console
	out, err := servers.ShowConsoleOutput(ctx, cl.compute, s.ID, servers.ShowConsoleOutputOpts{Length: 1}).Extract()
	if err != nil || !strings.Contains(out, "login:") || strings.Contains(out, "boot line") {
		t.Fatalf("console: %q %v", out, err)
	}
	// snapshot while running
	img1, err := servers.CreateImage(ctx, cl.compute, s.ID, servers.CreateImageOpts{Name: "snap-running", Metadata: map[string]string{"k": "v"}}).ExtractImageID()
	if err != nil {
		t.Fatal(err)
	}
	if err := servers.Stop(ctx, cl.compute, s.ID).ExtractErr(); !gophercloud.ResponseCodeIs(err, 409) {
		t.Fatalf("stop during snapshot should conflict: %v", err)
	}
	im := waitImage(t, cl.image, img1, "active")
	if im.Properties["k"] != "v" || im.Properties["image_type"] != "snapshot" || im.SizeBytes == 0 || im.Checksum == "" || im.MinDiskGigabytes != 20 {
		t.Fatalf("snapshot: %+v", im)
	}
	waitServer(t, cl.compute, s.ID, "ACTIVE")
	// stop / start / reboot
	if err := servers.Stop(ctx, cl.compute, s.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	waitServer(t, cl.compute, s.ID, "SHUTOFF")
	if err := servers.Stop(ctx, cl.compute, s.ID).ExtractErr(); !gophercloud.ResponseCodeIs(err, 409) {
		t.Fatalf("double stop: %v", err)
	}
	img2, err := servers.CreateImage(ctx, cl.compute, s.ID, servers.CreateImageOpts{Name: "snap-stopped"}).ExtractImageID()
	if err != nil {
		t.Fatal(err)
	}
	waitImage(t, cl.image, img2, "active")
	waitServer(t, cl.compute, s.ID, "SHUTOFF")
	if err := servers.Start(ctx, cl.compute, s.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	waitServer(t, cl.compute, s.ID, "ACTIVE")
	if err := servers.Reboot(ctx, cl.compute, s.ID, servers.RebootOpts{Type: servers.HardReboot}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	waitServer(t, cl.compute, s.ID, "ACTIVE")
	if err := servers.Reboot(ctx, cl.compute, s.ID, servers.RebootOpts{Type: servers.SoftReboot}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	waitServer(t, cl.compute, s.ID, "ACTIVE")
	if m := l.hv.machine(s.ID); m == nil || m.reboots != 2 {
		t.Fatal("reboots not forwarded")
	}
	// guest-initiated poweroff
	l.hv.machine(s.ID).guestPowerOff()
	waitServer(t, cl.compute, s.ID, "SHUTOFF")

	// snapshot of a snapshot boots
	s2, err := servers.Create(ctx, cl.compute, servers.CreateOpts{Name: "from-snap", ImageRef: img2, FlavorRef: testFlavor, Networks: "auto"}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	waitServer(t, cl.compute, s2.ID, "ACTIVE")
	// bad requests
	if _, err := servers.Create(ctx, cl.compute, servers.CreateOpts{Name: "x", ImageRef: "nope", FlavorRef: testFlavor, Networks: "none"}, nil).Extract(); !gophercloud.ResponseCodeIs(err, 400) {
		t.Fatalf("bad image: %v", err)
	}
	if _, err := servers.Get(ctx, cl.compute, "nope").Extract(); !gophercloud.ResponseCodeIs(err, 404) {
		t.Fatalf("404: %v", err)
	}

	for _, id := range []string{s.ID, s2.ID} {
		if err := servers.Delete(ctx, cl.compute, id).ExtractErr(); err != nil {
			t.Fatal(err)
		}
	}
	waitServerGone(t, cl.compute, s.ID)
	waitServerGone(t, cl.compute, s2.ID)
	for _, id := range []string{img1, img2} {
		if err := images.Delete(ctx, cl.image, id).ExtractErr(); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"gen", "imp"} {
		if err := keypairs.Delete(ctx, cl.compute, n, nil).ExtractErr(); err != nil {
			t.Fatal(err)
		}
	}
	l.assertClean()
}

func TestBootFromVolumeAndUpload(t *testing.T) {
	l := newLab(t, nil)
	cl := l.clients()
	// boot from a new volume created from the image
	s, err := servers.Create(ctx, cl.compute, servers.CreateOpts{Name: "bfv", FlavorRef: testFlavor, Networks: "auto",
		BlockDevice: []servers.BlockDevice{{SourceType: servers.SourceImage, UUID: l.imageID, DestinationType: servers.DestinationVolume,
			VolumeSize: 12, DeleteOnTermination: true, BootIndex: 0}}}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	got := waitServer(t, cl.compute, s.ID, "ACTIVE")
	if len(got.AttachedVolumes) != 1 || got.Image != nil && got.Image["id"] != nil {
		t.Fatalf("bfv server: %+v", got)
	}
	v := waitVolume(t, cl.volume, got.AttachedVolumes[0].ID, "in-use")
	if v.Size != 12 || len(v.Attachments) != 1 || v.Attachments[0].ServerID != s.ID || v.Bootable != "true" {
		t.Fatalf("volume: %+v", v)
	}
	if err := volumes.Delete(ctx, cl.volume, v.ID, nil).ExtractErr(); !gophercloud.ResponseCodeIs(err, 400) {
		t.Fatalf("delete in-use: %v", err)
	}
	snap, err := servers.CreateImage(ctx, cl.compute, s.ID, servers.CreateImageOpts{Name: "bfv-snap"}).ExtractImageID()
	if err != nil {
		t.Fatal(err)
	}
	// As Nova does: a zero-byte image naming a Cinder snapshot of the boot
	// volume (the old lab copied the volume's disk into the image).
	snapImg := waitImage(t, cl.image, snap, "active")
	cinderSnap := requireVolumeBackedSnapshot(t, cl, snapImg, v.ID)
	waitServer(t, cl.compute, s.ID, "ACTIVE")
	servers.Delete(ctx, cl.compute, s.ID)
	waitServerGone(t, cl.compute, s.ID)
	waitVolumeGone(t, cl.volume, v.ID) // delete_on_termination
	bootSnapshotImage(t, l, cl, snap, cinderSnap)

	// volume from image, boot from it (kept), upload to image
	vol, err := volumes.Create(ctx, cl.volume, volumes.CreateOpts{Size: 10, Name: "data", ImageID: l.imageID, Metadata: map[string]string{"a": "b"}}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if vol.Status != "creating" {
		t.Fatalf("status %s", vol.Status)
	}
	if _, err := volumes.Create(ctx, cl.volume, volumes.CreateOpts{Size: 5, ImageID: l.imageID}, nil).Extract(); !gophercloud.ResponseCodeIs(err, 400) {
		t.Fatalf("too small volume: %v", err)
	}
	waitVolume(t, cl.volume, vol.ID, "available")
	pages, err := volumes.List(cl.volume, volumes.ListOpts{}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if vs, _ := volumes.ExtractVolumes(pages); len(vs) != 1 || vs[0].Name != "data" || vs[0].Metadata["a"] != "b" {
		t.Fatalf("list: %+v", vs)
	}
	s, err = servers.Create(ctx, cl.compute, servers.CreateOpts{Name: "bfv2", FlavorRef: testFlavor, Networks: "auto",
		BlockDevice: []servers.BlockDevice{{SourceType: servers.SourceVolume, UUID: vol.ID, DestinationType: servers.DestinationVolume, BootIndex: 0}}}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	waitServer(t, cl.compute, s.ID, "ACTIVE")
	waitVolume(t, cl.volume, vol.ID, "in-use")
	servers.Delete(ctx, cl.compute, s.ID)
	waitServerGone(t, cl.compute, s.ID)
	waitVolume(t, cl.volume, vol.ID, "available")

	up, err := volumes.UploadImage(ctx, cl.volume, vol.ID, volumes.UploadImageOpts{ImageName: "from-volume", DiskFormat: "qcow2", ContainerFormat: "bare", Force: true}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if up.ImageID == "" || up.Status != "uploading" {
		t.Fatalf("upload: %+v", up)
	}
	waitVolume(t, cl.volume, vol.ID, "uploading")
	im := waitImage(t, cl.image, up.ImageID, "active")
	if im.DiskFormat != "qcow2" || im.Properties["os_distro"] != "rocky" {
		t.Fatalf("uploaded image: %+v", im)
	}
	waitVolume(t, cl.volume, vol.ID, "available")
	if err := volumes.Delete(ctx, cl.volume, vol.ID, nil).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	waitVolumeGone(t, cl.volume, vol.ID)
	for _, id := range []string{up.ImageID} {
		if err := images.Delete(ctx, cl.image, id).ExtractErr(); err != nil {
			t.Fatal(err)
		}
	}
	l.assertClean()
}

func TestNetworksAndSubnets(t *testing.T) {
	l := newLab(t, func(o *Options) { o.FixedCIDR, o.FixedGateway = "10.213.0.0/16", "10.213.0.1" })
	cl := l.clients()
	iTrue := true
	pages, err := networks.List(cl.network, networks.ListOpts{}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ns, _ := networks.ExtractNetworks(pages)
	if len(ns) != 2 {
		t.Fatalf("networks: %v", ns)
	}
	type extNet struct {
		ID       string `json:"id"`
		Name     string `json:"name"`
		External bool   `json:"router:external"`
	}
	pages, _ = networks.List(cl.network, externalOpts{networks.ListOpts{}, &iTrue}).AllPages(ctx)
	var ext []extNet
	if err := networks.ExtractNetworksInto(pages, &ext); err != nil || len(ext) != 1 || ext[0].Name != "public" || !ext[0].External {
		t.Fatalf("external: %+v %v", ext, err)
	}
	n, err := networks.Get(ctx, cl.network, ext[0].ID).Extract()
	if err != nil || n.Name != "public" {
		t.Fatal(err)
	}
	pages, _ = subnets.List(cl.network, subnets.ListOpts{NetworkID: labNet(t, cl.network).ID}).AllPages(ctx)
	sn, _ := subnets.ExtractSubnets(pages)
	if len(sn) != 1 || sn[0].CIDR != "10.213.0.0/16" || sn[0].GatewayIP != "10.213.0.1" {
		t.Fatalf("subnets: %+v", sn)
	}
	if _, err := subnets.Get(ctx, cl.network, sn[0].ID).Extract(); err != nil {
		t.Fatal(err)
	}
	_, err = networks.Get(ctx, cl.network, "nope").Extract()
	var e gophercloud.ErrUnexpectedResponseCode
	if !errors.As(err, &e) || e.Actual != 404 || !bytes.Contains(e.Body, []byte("NeutronError")) {
		t.Fatalf("404 shape: %v", err)
	}
}

type externalOpts struct {
	networks.ListOpts
	External *bool `q:"router:external"`
}

func (o externalOpts) ToNetworkListQuery() (string, error) {
	q, err := gophercloud.BuildQueryString(o)
	return q.String(), err
}

func TestImageUploadDownload(t *testing.T) {
	l := newLab(t, nil)
	cl := l.clients()
	img, err := images.Create(ctx, cl.image, images.CreateOpts{Name: "raw", DiskFormat: "raw", ContainerFormat: "bare"}).Extract()
	if err != nil || img.Status != "queued" {
		t.Fatalf("%+v %v", img, err)
	}
	if len(l.c.Status().Images) != 1 {
		t.Fatal("queued image should show in Status")
	}
	data := []byte("hello image data")
	if err := uploadData(cl.image, img.ID, data); err != nil {
		t.Fatal(err)
	}
	im := waitImage(t, cl.image, img.ID, "active")
	sum := md5.Sum(data)
	if im.SizeBytes != int64(len(data)) || im.Checksum != hex.EncodeToString(sum[:]) || im.Properties["os_hash_algo"] != "sha512" {
		t.Fatalf("%+v", im)
	}
	rc, err := downloadData(cl.image, img.ID)
	if err != nil || !bytes.Equal(rc, data) {
		t.Fatalf("download %q %v", rc, err)
	}
	images.Delete(ctx, cl.image, img.ID)
	l.assertClean()
}

func readAll(r io.Reader) []byte { b, _ := io.ReadAll(r); return b }
