package realcloud

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/domains"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/endpoints"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/services"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/imagedata"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/agents"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/external"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/provider"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
)

// catalog is what the tier registers besides Keystone (keystone-manage
// bootstrap does that one). Cinder is registered under both of its types:
// gophercloud asks for block-storage, Nova and the CLI for volumev3.
func catalog(p Ports) []struct{ Type, Name, URL string } {
	u := func(port int, path string) string { return fmt.Sprintf("http://%s:%d%s", Host, port, path) }
	return []struct{ Type, Name, URL string }{
		{"image", "glance", u(p.Glance, "")},
		{"placement", "placement", u(p.Placement, "")},
		{"compute", "nova", u(p.Nova, "/v2.1")},
		{"network", "neutron", u(p.Neutron, "")},
		{"volumev3", "cinderv3", u(p.Cinder, "/v3/%(project_id)s")},
		{"block-storage", "cinder", u(p.Cinder, "/v3/%(project_id)s")},
	}
}

// SeedIdentity registers the catalog, the service user (admin and service
// roles in the service project: the service role makes Nova's service
// token count), the member user in its own project and a share project,
// idempotently.
func (t *Tier) SeedIdentity(ctx context.Context) error {
	p, err := t.Provider(ctx, true)
	if err != nil {
		return err
	}
	id, err := openstack.NewIdentityV3(p, EndpointOpts)
	if err != nil {
		return err
	}
	for _, s := range catalog(t.Ports) {
		if err := ensureService(ctx, id, s.Type, s.Name, s.URL); err != nil {
			return err
		}
	}
	roleIDs := map[string]string{}
	for _, r := range []string{"admin", "member", "reader", "service"} {
		if roleIDs[r], err = ensureRole(ctx, id, r); err != nil {
			return err
		}
	}
	// Sites keep users and projects in different domains: the
	// authentication matrix's user lives in one, its project in another.
	domainIDs := map[string]string{"Default": "default"}
	for _, d := range []string{AuthUserDomain, AuthProjectDomain} {
		if domainIDs[d], err = ensureDomain(ctx, id, d); err != nil {
			return err
		}
	}
	projectIDs := map[string]string{}
	for _, pr := range []struct{ name, domain string }{
		{ServiceProject, "Default"}, {MemberProject, "Default"}, {ShareProject, "Default"}, {AuthProject, AuthProjectDomain},
	} {
		if projectIDs[pr.name], err = ensureProject(ctx, id, pr.name, domainIDs[pr.domain]); err != nil {
			return err
		}
	}
	grants := []struct {
		user, domain, secret, project string
		roles                         []string
	}{
		{ServiceUser, "Default", "service", ServiceProject, []string{"admin", "service"}},
		{MemberUser, "Default", "member", MemberProject, []string{"member", "reader"}},
		{MemberUser, "Default", "member", ShareProject, []string{"member", "reader"}},
		{AuthUser, AuthUserDomain, "auth", AuthProject, []string{"member", "reader"}},
	}
	for _, g := range grants {
		pw, err := t.Secret(g.secret)
		if err != nil {
			return err
		}
		uid, err := ensureUser(ctx, id, g.user, domainIDs[g.domain], pw, projectIDs[g.project])
		if err != nil {
			return err
		}
		for _, r := range g.roles {
			if err := roles.Assign(ctx, id, roleIDs[r], roles.AssignOpts{UserID: uid, ProjectID: projectIDs[g.project]}).ExtractErr(); err != nil {
				return fmt.Errorf("realcloud: granting %s on %s to %s: %w", r, g.project, g.user, err)
			}
		}
	}
	return nil
}

func ensureService(ctx context.Context, c *gophercloud.ServiceClient, typ, name, url string) error {
	pages, err := services.List(c, services.ListOpts{ServiceType: typ, Name: name}).AllPages(ctx)
	if err != nil {
		return fmt.Errorf("realcloud: listing services: %w", err)
	}
	all, err := services.ExtractServices(pages)
	if err != nil {
		return err
	}
	var sid string
	if len(all) > 0 {
		sid = all[0].ID
	} else {
		s, err := services.Create(ctx, c, services.CreateOpts{Type: typ, Extra: map[string]any{"name": name}}).Extract()
		if err != nil {
			return fmt.Errorf("realcloud: creating service %s: %w", name, err)
		}
		sid = s.ID
	}
	for _, av := range []gophercloud.Availability{gophercloud.AvailabilityPublic, gophercloud.AvailabilityInternal} {
		pages, err := endpoints.List(c, endpoints.ListOpts{ServiceID: sid, Availability: av}).AllPages(ctx)
		if err != nil {
			return err
		}
		eps, err := endpoints.ExtractEndpoints(pages)
		if err != nil {
			return err
		}
		if len(eps) > 0 {
			continue
		}
		if _, err := endpoints.Create(ctx, c, endpoints.CreateOpts{Availability: av, Name: name, Region: Region, URL: url, ServiceID: sid}).Extract(); err != nil {
			return fmt.Errorf("realcloud: creating the %s endpoint of %s: %w", av, name, err)
		}
	}
	return nil
}

func ensureRole(ctx context.Context, c *gophercloud.ServiceClient, name string) (string, error) {
	pages, err := roles.List(c, roles.ListOpts{Name: name}).AllPages(ctx)
	if err != nil {
		return "", err
	}
	all, err := roles.ExtractRoles(pages)
	if err != nil {
		return "", err
	}
	if len(all) > 0 {
		return all[0].ID, nil
	}
	r, err := roles.Create(ctx, c, roles.CreateOpts{Name: name}).Extract()
	if err != nil {
		return "", fmt.Errorf("realcloud: creating role %s: %w", name, err)
	}
	return r.ID, nil
}

func ensureDomain(ctx context.Context, c *gophercloud.ServiceClient, name string) (string, error) {
	pages, err := domains.List(c, domains.ListOpts{Name: name}).AllPages(ctx)
	if err != nil {
		return "", err
	}
	all, err := domains.ExtractDomains(pages)
	if err != nil {
		return "", err
	}
	if len(all) > 0 {
		return all[0].ID, nil
	}
	d, err := domains.Create(ctx, c, domains.CreateOpts{Name: name}).Extract()
	if err != nil {
		return "", fmt.Errorf("realcloud: creating domain %s: %w", name, err)
	}
	return d.ID, nil
}

func ensureProject(ctx context.Context, c *gophercloud.ServiceClient, name, domainID string) (string, error) {
	pages, err := projects.List(c, projects.ListOpts{Name: name, DomainID: domainID}).AllPages(ctx)
	if err != nil {
		return "", err
	}
	all, err := projects.ExtractProjects(pages)
	if err != nil {
		return "", err
	}
	if len(all) > 0 {
		return all[0].ID, nil
	}
	pr, err := projects.Create(ctx, c, projects.CreateOpts{Name: name, DomainID: domainID}).Extract()
	if err != nil {
		return "", fmt.Errorf("realcloud: creating project %s: %w", name, err)
	}
	return pr.ID, nil
}

func ensureUser(ctx context.Context, c *gophercloud.ServiceClient, name, domainID, password, projectID string) (string, error) {
	pages, err := users.List(c, users.ListOpts{Name: name, DomainID: domainID}).AllPages(ctx)
	if err != nil {
		return "", err
	}
	all, err := users.ExtractUsers(pages)
	if err != nil {
		return "", err
	}
	if len(all) > 0 {
		return all[0].ID, nil
	}
	u, err := users.Create(ctx, c, users.CreateOpts{Name: name, DomainID: domainID, Password: password, DefaultProjectID: projectID}).Extract()
	if err != nil {
		return "", fmt.Errorf("realcloud: creating user %s: %w", name, err)
	}
	return u.ID, nil
}

// Flavors are named like the lab's, so a template runs on either.
var Flavors = []flavors.CreateOpts{
	{ID: "1", Name: "m1.small", VCPUs: 1, RAM: 2048, Disk: gophercloud.IntToPointer(20)},
	{ID: "2", Name: "m1.medium", VCPUs: 2, RAM: 4096, Disk: gophercloud.IntToPointer(40)},
	{ID: "3", Name: "general.v1.small", VCPUs: 2, RAM: 4096, Disk: gophercloud.IntToPointer(20)},
}

// BaseImage is the bytes of the tier's base image: a raw disk of one MiB
// whose first bytes name it. Nothing boots it (the servers are fakes); a
// snapshot of a server booted from it holds the same bytes.
func BaseImage() []byte {
	b := make([]byte, 1<<20)
	copy(b, "fatimage realcloud base image "+BaseImageName+"\n")
	return b
}

// SeedResources creates the flavors, the external network "public" (admin),
// the member's network, subnet and router to public, and the public base
// image, idempotently; then writes clouds.yaml and the env file.
func (t *Tier) SeedResources(ctx context.Context) error {
	admin, err := t.Provider(ctx, true)
	if err != nil {
		return err
	}
	member, err := t.Provider(ctx, false)
	if err != nil {
		return err
	}
	compute, err := openstack.NewComputeV2(admin, EndpointOpts)
	if err != nil {
		return err
	}
	for _, f := range Flavors {
		if _, err := flavors.Get(ctx, compute, f.ID).Extract(); err == nil {
			continue
		}
		if _, err := flavors.Create(ctx, compute, f).Extract(); err != nil {
			return fmt.Errorf("realcloud: creating flavor %s: %w", f.Name, err)
		}
	}
	id, err := openstack.NewIdentityV3(admin, EndpointOpts)
	if err != nil {
		return err
	}
	memberProject, err := ensureProject(ctx, id, MemberProject, "default")
	if err != nil {
		return err
	}
	anet, err := openstack.NewNetworkV2(admin, EndpointOpts)
	if err != nil {
		return err
	}
	if err := waitAgents(ctx, anet); err != nil {
		return err
	}
	if err := seedNetworks(ctx, anet, member, memberProject); err != nil {
		return err
	}
	img, err := openstack.NewImageV2(admin, EndpointOpts)
	if err != nil {
		return err
	}
	if err := ensureBaseImage(ctx, img); err != nil {
		return err
	}
	if err := ensureGuestImage(ctx, img, t.GuestImage()); err != nil {
		return err
	}
	share, err := ensureProject(ctx, id, ShareProject, "default")
	if err != nil {
		return err
	}
	_, err = t.WriteEnv(share)
	return err
}

// seedNetworks creates the external network "public" and the member's
// network, subnet (DHCP on: Neutron's DHCP agent serves the guests) and
// router to public. The member's network is a flat provider network on
// the guest host's bridge (physical network "guests"), made by the admin
// for the member's project, as sites make provider networks.
func seedNetworks(ctx context.Context, anet *gophercloud.ServiceClient, member *gophercloud.ProviderClient, memberProject string) error {
	pub, err := ensureNetwork(ctx, anet, FloatingNetwork, external.CreateOptsExt{
		CreateOptsBuilder: provider.CreateOptsExt{
			CreateOptsBuilder: networks.CreateOpts{Name: FloatingNetwork, Shared: gophercloud.Enabled},
			Segments:          []provider.Segment{{NetworkType: "flat", PhysicalNetwork: "ext"}},
		},
		External: gophercloud.Enabled,
	})
	if err != nil {
		return err
	}
	if err := ensureSubnet(ctx, anet, pub, "public-subnet", ExternalCIDR, false, nil); err != nil {
		return err
	}
	tenant, err := ensureNetwork(ctx, anet, TenantNetwork, provider.CreateOptsExt{
		CreateOptsBuilder: networks.CreateOpts{Name: TenantNetwork, ProjectID: memberProject},
		Segments:          []provider.Segment{{NetworkType: "flat", PhysicalNetwork: GuestPhysicalNetwork}},
	})
	if err != nil {
		return err
	}
	var n struct {
		networks.Network
		provider.NetworkProviderExt
	}
	if err := networks.Get(ctx, anet, tenant).ExtractInto(&n); err != nil {
		return err
	}
	if n.NetworkType != "flat" || n.PhysicalNetwork != GuestPhysicalNetwork {
		// made by an earlier tier, before its guests were on Neutron's agents
		return fmt.Errorf("realcloud: network %s is %s on %q, not flat on %q: remake the tier (make realcloud-down REALCLOUD_PURGE=1)",
			TenantNetwork, n.NetworkType, n.PhysicalNetwork, GuestPhysicalNetwork)
	}
	mnet, err := openstack.NewNetworkV2(member, EndpointOpts)
	if err != nil {
		return err
	}
	pool := []subnets.AllocationPool{{Start: guestPoolStart, End: guestPoolEnd}}
	if err := ensureSubnet(ctx, mnet, tenant, TenantSubnet, GuestNetwork.CIDR, true, pool); err != nil {
		return err
	}
	if err := ensureSSHGroup(ctx, mnet); err != nil {
		return err
	}
	return ensureRouter(ctx, mnet, pub, tenant)
}

// waitAgents waits until Neutron reports the agents up.sh started alive on
// the compute host: a port binds only where its agent runs.
func waitAgents(ctx context.Context, c *gophercloud.ServiceClient) error {
	want := []string{"Linux bridge agent", "DHCP agent", "L3 agent", "Metadata agent"}
	var missing []string
	// An agent whose first report reached neutron-server before its RPC
	// consumers existed waits for the RPC timeout (60 s) and a retry.
	for deadline := time.Now().Add(4 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		pages, err := agents.List(c, agents.ListOpts{Host: "realcloud", Alive: gophercloud.Enabled}).AllPages(ctx)
		if err != nil {
			return fmt.Errorf("realcloud: listing Neutron's agents: %w", err)
		}
		all, err := agents.ExtractAgents(pages)
		if err != nil {
			return err
		}
		alive := map[string]bool{}
		for _, a := range all {
			alive[a.AgentType] = true
		}
		missing = missing[:0]
		for _, w := range want {
			if !alive[w] {
				missing = append(missing, w)
			}
		}
		if len(missing) == 0 {
			return nil
		}
	}
	return fmt.Errorf("realcloud: Neutron's %s not alive on host realcloud after 4 minutes (logs in .realcloud/log)", strings.Join(missing, " and "))
}

// ensureSSHGroup creates the member's security group that opens SSH, as a
// site gives its image builds one: the L3 agent's router forwards the
// builder's connection to a floating IP through the guest's port, where
// the Linux bridge agent applies the port's groups (the default group
// opens nothing to other sources).
func ensureSSHGroup(ctx context.Context, c *gophercloud.ServiceClient) error {
	pages, err := groups.List(c, groups.ListOpts{Name: SSHSecurityGroup}).AllPages(ctx)
	if err != nil {
		return err
	}
	if all, err := groups.ExtractGroups(pages); err != nil || len(all) > 0 {
		return err
	}
	g, err := groups.Create(ctx, c, groups.CreateOpts{Name: SSHSecurityGroup, Description: "SSH for the tier's builds"}).Extract()
	if err != nil {
		return fmt.Errorf("realcloud: creating security group %s: %w", SSHSecurityGroup, err)
	}
	_, err = rules.Create(ctx, c, rules.CreateOpts{SecGroupID: g.ID, Direction: rules.DirIngress, EtherType: rules.EtherType4,
		Protocol: rules.ProtocolTCP, PortRangeMin: 22, PortRangeMax: 22, RemoteIPPrefix: "0.0.0.0/0"}).Extract()
	if err != nil {
		return fmt.Errorf("realcloud: opening SSH in %s: %w", SSHSecurityGroup, err)
	}
	return nil
}

func findNetwork(ctx context.Context, c *gophercloud.ServiceClient, name string) (string, error) {
	pages, err := networks.List(c, networks.ListOpts{Name: name}).AllPages(ctx)
	if err != nil {
		return "", err
	}
	all, err := networks.ExtractNetworks(pages)
	if err != nil || len(all) == 0 {
		return "", err
	}
	return all[0].ID, nil
}

func ensureNetwork(ctx context.Context, c *gophercloud.ServiceClient, name string, opts networks.CreateOptsBuilder) (string, error) {
	if id, err := findNetwork(ctx, c, name); err != nil || id != "" {
		return id, err
	}
	n, err := networks.Create(ctx, c, opts).Extract()
	if err != nil {
		return "", fmt.Errorf("realcloud: creating network %s: %w", name, err)
	}
	return n.ID, nil
}

func ensureSubnet(ctx context.Context, c *gophercloud.ServiceClient, network, name, cidr string, dhcp bool, pool []subnets.AllocationPool) error {
	pages, err := subnets.List(c, subnets.ListOpts{NetworkID: network}).AllPages(ctx)
	if err != nil {
		return err
	}
	if all, err := subnets.ExtractSubnets(pages); err != nil || len(all) > 0 {
		return err
	}
	_, err = subnets.Create(ctx, c, subnets.CreateOpts{NetworkID: network, Name: name, CIDR: cidr, IPVersion: gophercloud.IPv4, EnableDHCP: &dhcp, AllocationPools: pool}).Extract()
	if err != nil {
		return fmt.Errorf("realcloud: creating subnet %s: %w", name, err)
	}
	return nil
}

func ensureRouter(ctx context.Context, c *gophercloud.ServiceClient, external, tenant string) error {
	pages, err := routers.List(c, routers.ListOpts{Name: RouterName}).AllPages(ctx)
	if err != nil {
		return err
	}
	if all, err := routers.ExtractRouters(pages); err != nil || len(all) > 0 {
		return err
	}
	r, err := routers.Create(ctx, c, routers.CreateOpts{Name: RouterName, GatewayInfo: &routers.GatewayInfo{NetworkID: external}}).Extract()
	if err != nil {
		return fmt.Errorf("realcloud: creating router: %w", err)
	}
	spages, err := subnets.List(c, subnets.ListOpts{NetworkID: tenant}).AllPages(ctx)
	if err != nil {
		return err
	}
	sn, err := subnets.ExtractSubnets(spages)
	if err != nil || len(sn) == 0 {
		return fmt.Errorf("realcloud: no subnet on %s: %v", TenantNetwork, err)
	}
	if _, err := routers.AddInterface(ctx, c, r.ID, routers.AddInterfaceOpts{SubnetID: sn[0].ID}).Extract(); err != nil {
		return fmt.Errorf("realcloud: router interface: %w", err)
	}
	return nil
}

func ensureBaseImage(ctx context.Context, c *gophercloud.ServiceClient) error {
	return ensureImage(ctx, c, BaseImageName, bytes.NewReader(BaseImage()))
}

// ensureImage creates the public image name with data, unless it exists.
func ensureImage(ctx context.Context, c *gophercloud.ServiceClient, name string, data io.Reader) error {
	pages, err := images.List(c, images.ListOpts{Name: name}).AllPages(ctx)
	if err != nil {
		return err
	}
	all, err := images.ExtractImages(pages)
	if err != nil {
		return err
	}
	for _, im := range all {
		if im.Status == images.ImageStatusActive {
			return nil
		}
	}
	vis := images.ImageVisibilityPublic
	im, err := images.Create(ctx, c, images.CreateOpts{
		Name: name, DiskFormat: "raw", ContainerFormat: "bare", Visibility: &vis,
		Properties: map[string]string{"os_distro": "rocky", "os_version": "9.6", "os_type": "linux"},
	}).Extract()
	if err != nil {
		return fmt.Errorf("realcloud: creating %s: %w", name, err)
	}
	if err := imagedata.Upload(ctx, c, im.ID, data).ExtractErr(); err != nil {
		return fmt.Errorf("realcloud: uploading %s: %w", name, err)
	}
	return nil
}
