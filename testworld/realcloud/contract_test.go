//go:build realcloud

package realcloud

// One contract suite, two targets: each check runs against the real
// services (the tier) and against the lab's cloud double
// (testworld/lab/cloud, started in process with an in-memory hypervisor),
// and asserts what real OpenStack answers. A check that passes on the
// tier and fails on the double is a difference of the double.

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/quotasets"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/imagedata"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/members"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/quotas"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/cloud"
)

// target is a cloud the contract runs against: the member's and an
// admin's providers, the member's project, the tenant network's and the
// external network's names, a second project of the member.
type target struct {
	member, admin    *gophercloud.ProviderClient
	project          string // the member's
	tenant, external string
	shareProject     string
	base             string // the public base image's name
	// failSpawn arms a spawn failure of the server called name, when
	// metadata alone does not (the double); nil on the tier
	failSpawn func(t *testing.T, name string)
	// guestImage boots a server whose guest reads its metadata, in
	// sshGroups (the host reaches the tier's guests through them);
	// metadata reads it as that guest does
	guestImage string
	sshGroups  []string
	metadata   metadataReader
	// guests is the target whose servers are real guests, when this one's
	// are not (the double's in-memory hypervisor): a lab's cloud
	guests func(t *testing.T) target
}

func realTarget(t *testing.T) target {
	tr := tier(t)
	p, err := tr.Provider(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := tr.Provider(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	return target{member: p, admin: admin, project: projectOf(t, p), tenant: TenantNetwork, external: FloatingNetwork, shareProject: shareProject(t, tr), base: BaseImageName,
		guestImage: GuestImageName, sshGroups: []string{SSHSecurityGroup}, metadata: realMetadata}
}

func doubleTarget(t *testing.T) target {
	hv := &cloud.MemHypervisor{}
	c, err := cloud.New(cloud.Options{
		Hypervisor: hv,
		Users: []cloud.User{{Name: "member", Password: "contract-pw", Project: "member", Domain: "Default",
			OtherProjects: []string{"share"}},
			{Name: "admin", Password: "contract-admin-pw", Project: "admin", Domain: "Default", Roles: []string{"admin"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.AddFlavor(cloud.Flavor{ID: "1", Name: "m1.small", VCPUs: 1, RAM: 2048, Disk: 20})
	disk, _ := hv.CloneDisk("")
	if _, err := c.AddImage(cloud.ImageSeed{Name: BaseImageName, Disk: disk, Visibility: "public"}); err != nil {
		t.Fatal(err)
	}
	login := func(user, pw string) *gophercloud.ProviderClient {
		p, err := openstack.AuthenticatedClient(context.Background(), gophercloud.AuthOptions{
			IdentityEndpoint: c.AuthURL(), Username: user, Password: pw, DomainName: "Default",
			Scope: &gophercloud.AuthScope{ProjectName: user, DomainName: "Default"},
		})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := login("member", "contract-pw")
	fail := func(_ *testing.T, name string) {
		c.SetFaults(cloud.Fault{Kind: cloud.FaultServerError, Name: "^" + regexp.QuoteMeta(name) + "$", Times: 1,
			Message: "Failed to deploy instance: " + failSpawnKey + " is set in the server's metadata"})
	}
	return target{member: p, admin: login("admin", "contract-admin-pw"), project: c.ProjectID("member"), tenant: "lab-net", external: "public",
		shareProject: c.ProjectID("share"), base: BaseImageName, failSpawn: fail, guestImage: BaseImageName, metadata: doubleMetadata(c),
		guests: labGuests}
}

// TestContract runs every check on both targets.
func TestContract(t *testing.T) {
	targets := map[string]func(*testing.T) target{"real": realTarget, "double": doubleTarget}
	for _, name := range []string{"real", "double"} {
		t.Run(name, func(t *testing.T) {
			tg := targets[name](t)
			for _, c := range contractChecks {
				t.Run(c.name, func(t *testing.T) { c.check(t, tg) })
			}
		})
	}
}

// projectOf is the project p's token is scoped to.
func projectOf(t *testing.T, p *gophercloud.ProviderClient) string {
	t.Helper()
	r, ok := p.GetAuthResult().(interface {
		ExtractProject() (*tokens.Project, error)
	})
	if !ok {
		t.Fatalf("not a Keystone v3 token: %T", p.GetAuthResult())
	}
	pr, err := r.ExtractProject()
	if err != nil || pr == nil {
		t.Fatalf("the token's project: %v", err)
	}
	return pr.ID
}

func (tg target) client(t *testing.T, newClient func(*gophercloud.ProviderClient, gophercloud.EndpointOpts) (*gophercloud.ServiceClient, error)) *gophercloud.ServiceClient {
	t.Helper()
	return clientOf(t, tg.member, newClient)
}

func (tg target) adminClient(t *testing.T, newClient func(*gophercloud.ProviderClient, gophercloud.EndpointOpts) (*gophercloud.ServiceClient, error)) *gophercloud.ServiceClient {
	t.Helper()
	return clientOf(t, tg.admin, newClient)
}

func clientOf(t *testing.T, p *gophercloud.ProviderClient, newClient func(*gophercloud.ProviderClient, gophercloud.EndpointOpts) (*gophercloud.ServiceClient, error)) *gophercloud.ServiceClient {
	t.Helper()
	c, err := newClient(p, gophercloud.EndpointOpts{Region: Region})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// networkNamed is the one network called name.
func networkNamed(t *testing.T, nc *gophercloud.ServiceClient, name string) string {
	t.Helper()
	pages, err := networks.List(nc, networks.ListOpts{Name: name}).AllPages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	nets, _ := networks.ExtractNetworks(pages)
	if len(nets) != 1 {
		t.Fatalf("networks named %s: %d", name, len(nets))
	}
	return nets[0].ID
}

func wantCode(t *testing.T, what string, err error, code int) {
	t.Helper()
	if !gophercloud.ResponseCodeIs(err, code) {
		t.Errorf("%s: got %v, want HTTP %d", what, err, code)
	}
}

// wantBody is wantCode that also wants each of subs in the answer's body.
func wantBody(t *testing.T, what string, err error, code int, subs ...string) {
	t.Helper()
	wantCode(t, what, err, code)
	var e gophercloud.ErrUnexpectedResponseCode
	if !errors.As(err, &e) {
		return
	}
	for _, s := range subs {
		if !strings.Contains(string(e.Body), s) {
			t.Errorf("%s: the body lacks %q: %s", what, s, e.Body)
		}
	}
}

// newImage is an active private image of the member, deleted at the end.
func (tg target) newImage(t *testing.T, ic *gophercloud.ServiceClient) *images.Image {
	t.Helper()
	ctx := context.Background()
	vis := images.ImageVisibilityShared
	im, err := images.Create(ctx, ic, images.CreateOpts{Name: uniqueName("contract"), DiskFormat: "raw", ContainerFormat: "bare", Visibility: &vis}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteImage(t, ic, im.ID) })
	if err := imagedata.Upload(ctx, ic, im.ID, bytes.NewReader([]byte("contract image"))).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	return im
}

var contractChecks = []struct {
	name  string
	check func(*testing.T, target)
}{
	{"glance/owner-cannot-accept-membership", func(t *testing.T, tg target) {
		ic := tg.client(t, openstack.NewImageV2)
		im := tg.newImage(t, ic)
		if _, err := members.Create(context.Background(), ic, im.ID, tg.shareProject).Extract(); err != nil {
			t.Fatal(err)
		}
		_, err := members.Update(context.Background(), ic, im.ID, tg.shareProject, members.UpdateOpts{Status: "accepted"}).Extract()
		wantCode(t, "the owner accepting its own share", err, 403)
	}},
	{"glance/protected-image-not-deleted", func(t *testing.T, tg target) {
		ic := tg.client(t, openstack.NewImageV2)
		im := tg.newImage(t, ic)
		if _, err := images.Update(context.Background(), ic, im.ID, images.UpdateOpts{images.ReplaceImageProtected{NewProtected: true}}).Extract(); err != nil {
			t.Fatal(err)
		}
		wantCode(t, "deleting a protected image", images.Delete(context.Background(), ic, im.ID).ExtractErr(), 403)
	}},
	{"glance/second-upload-conflicts", func(t *testing.T, tg target) {
		ic := tg.client(t, openstack.NewImageV2)
		im := tg.newImage(t, ic)
		err := imagedata.Upload(context.Background(), ic, im.ID, bytes.NewReader([]byte("again"))).ExtractErr()
		wantCode(t, "uploading to an active image", err, 409)
	}},
	{"glance/bad-disk-format", func(t *testing.T, tg target) {
		ic := tg.client(t, openstack.NewImageV2)
		_, err := images.Create(context.Background(), ic, images.CreateOpts{Name: uniqueName("contract"), DiskFormat: "floppy", ContainerFormat: "bare"}).Extract()
		wantCode(t, "disk_format floppy", err, 400)
	}},
	{"glance/remove-missing-property", func(t *testing.T, tg target) {
		// skip_inherited_properties removes only what the image has:
		// Glance refuses to remove a property that is not there
		ic := tg.client(t, openstack.NewImageV2)
		im := tg.newImage(t, ic)
		_, err := images.Update(context.Background(), ic, im.ID, images.UpdateOpts{images.UpdateImageProperty{Op: images.RemoveOp, Name: "no_such_property"}}).Extract()
		wantCode(t, "removing a missing property", err, 409)
	}},
	{"neutron/free-floating-ip-is-down", func(t *testing.T, tg target) {
		// reuse_ips lists the project's floating IPs with status DOWN and
		// no port: a new, unattached one is such an IP
		nc := tg.client(t, openstack.NewNetworkV2)
		ext := networkNamed(t, nc, tg.external)
		fip, err := floatingips.Create(context.Background(), nc, floatingips.CreateOpts{FloatingNetworkID: ext}).Extract()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { floatingips.Delete(context.Background(), nc, fip.ID) })
		pages, err := floatingips.List(nc, floatingips.ListOpts{FloatingNetworkID: ext, Status: "DOWN"}).AllPages(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		all, _ := floatingips.ExtractFloatingIPs(pages)
		found := false
		for _, f := range all {
			found = found || (f.ID == fip.ID && f.PortID == "" && f.Status == "DOWN")
		}
		if !found {
			t.Errorf("a new unattached floating IP (%s, status %s) is not listed with status=DOWN: %+v", fip.ID, fip.Status, all)
		}
		pages, err = floatingips.List(nc, floatingips.ListOpts{FloatingNetworkID: ext, Status: "ACTIVE"}).AllPages(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		all, _ = floatingips.ExtractFloatingIPs(pages)
		for _, f := range all {
			if f.ID == fip.ID {
				t.Errorf("the unattached floating IP is listed with status=ACTIVE: %+v", f)
			}
		}
	}},
	{"nova/missing-server", func(t *testing.T, tg target) {
		cc := tg.client(t, openstack.NewComputeV2)
		_, err := servers.Get(context.Background(), cc, "0b7e1c5a-6a4f-4c53-9d8a-2a4b7f3c9e10").Extract()
		wantCode(t, "GET a missing server", err, 404)
	}},
	{"nova/missing-flavor", func(t *testing.T, tg target) {
		cc := tg.client(t, openstack.NewComputeV2)
		_, err := servers.Create(context.Background(), cc, servers.CreateOpts{Name: uniqueName("contract"), FlavorRef: "no-such-flavor", ImageRef: "0b7e1c5a-6a4f-4c53-9d8a-2a4b7f3c9e10"}, nil).Extract()
		wantCode(t, "a server with a missing flavor", err, 400)
	}},
	{"cinder/missing-volume", func(t *testing.T, tg target) {
		bc := tg.client(t, openstack.NewBlockStorageV3)
		_, err := volumes.Get(context.Background(), bc, "0b7e1c5a-6a4f-4c53-9d8a-2a4b7f3c9e10").Extract()
		wantCode(t, "GET a missing volume", err, 404)
	}},
	{"nova/instances-quota", func(t *testing.T, tg target) {
		// TestQuotaExceeded's first half: the admin sets the member's
		// instances to 0; the member cannot, nor lift it
		ctx := context.Background()
		cc, ac := tg.client(t, openstack.NewComputeV2), tg.adminClient(t, openstack.NewComputeV2)
		zero := gophercloud.IntToPointer(0)
		_, err := quotasets.Update(ctx, cc, tg.project, quotasets.UpdateOpts{Instances: zero}).Extract()
		wantBody(t, "the member setting its quota", err, 403, "os_compute_api:os-quota-sets:update")
		if _, err := quotasets.Update(ctx, ac, tg.project, quotasets.UpdateOpts{Instances: zero, Force: true}).Extract(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := quotasets.Delete(ctx, ac, tg.project).Err; err != nil {
				t.Errorf("restoring the compute quota: %v", err)
			}
		})
		wantCode(t, "the member resetting its quota", quotasets.Delete(ctx, cc, tg.project).Err, 403)
		if q, err := quotasets.Get(ctx, cc, tg.project).Extract(); err != nil || q.Instances != 0 {
			t.Errorf("the member reading its quota: %+v %v", q, err)
		}
		nc := tg.client(t, openstack.NewNetworkV2)
		s, err := servers.Create(ctx, cc, servers.CreateOpts{Name: uniqueName("contract"), FlavorRef: "1",
			ImageRef: findImage(t, tg.client(t, openstack.NewImageV2), tg.base).ID,
			Networks: []servers.Network{{UUID: networkNamed(t, nc, tg.tenant)}}}, nil).Extract()
		if err == nil {
			servers.Delete(ctx, cc, s.ID)
		}
		wantBody(t, "a server over the instances quota", err, 403,
			`"forbidden"`, "Quota exceeded for instances: Requested 1, but already used ", " of 0 instances")
		if err := quotasets.Delete(ctx, ac, tg.project).Err; err != nil {
			t.Fatal(err)
		}
		if q, err := quotasets.Get(ctx, cc, tg.project).Extract(); err != nil || q.Instances != 10 || q.Cores != 20 || q.RAM != 51200 {
			t.Errorf("the reset quota is not the default (instances 10, cores 20, ram 51200): %+v %v", q, err)
		}
	}},
	{"neutron/floatingip-quota", func(t *testing.T, tg target) {
		// TestQuotaExceeded's second half, for floating_ip_network
		ctx := context.Background()
		nc, ac := tg.client(t, openstack.NewNetworkV2), tg.adminClient(t, openstack.NewNetworkV2)
		zero := gophercloud.IntToPointer(0)
		_, err := quotas.Update(ctx, nc, tg.project, quotas.UpdateOpts{FloatingIP: zero}).Extract()
		wantBody(t, "the member setting its quota", err, 403, "rule:update_quota is disallowed by policy")
		if _, err := quotas.Update(ctx, ac, tg.project, quotas.UpdateOpts{FloatingIP: zero}).Extract(); err != nil {
			t.Fatal(err)
		}
		reset := false
		t.Cleanup(func() {
			if err := quotas.Delete(ctx, ac, tg.project).ExtractErr(); err != nil && !reset {
				t.Errorf("restoring the network quota: %v", err)
			}
		})
		fip, err := floatingips.Create(ctx, nc, floatingips.CreateOpts{FloatingNetworkID: networkNamed(t, nc, tg.external)}).Extract()
		if err == nil {
			floatingips.Delete(ctx, nc, fip.ID)
		}
		wantBody(t, "a floating IP over the floatingip quota", err, 409,
			`"OverQuota"`, "Quota exceeded for resources: ['floatingip'].")
		if err := quotas.Delete(ctx, ac, tg.project).ExtractErr(); err != nil {
			t.Fatal(err)
		}
		reset = true
		if q, err := quotas.Get(ctx, nc, tg.project).Extract(); err != nil || q.FloatingIP != 50 {
			t.Errorf("the reset quota is not the default (floatingip 50): %+v %v", q, err)
		}
		// Neutron has nothing to reset now
		wantBody(t, "a second reset", quotas.Delete(ctx, ac, tg.project).ExtractErr(), 404, "TenantQuotaNotFound")
	}},
	{"neutron/floating-ip-needs-external-network", func(t *testing.T, tg target) {
		nc := tg.client(t, openstack.NewNetworkV2)
		fip, err := floatingips.Create(context.Background(), nc, floatingips.CreateOpts{FloatingNetworkID: networkNamed(t, nc, tg.tenant)}).Extract()
		if err == nil {
			floatingips.Delete(context.Background(), nc, fip.ID)
		}
		wantCode(t, "a floating IP from the tenant network", err, 400)
	}},
}
