package openstack

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"github.com/hashicorp/packer-plugin-sdk/multistep"
	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"

	"github.com/stackhpc/packer-plugin-fatimage/internal/httpretry"
)

// clients are the service clients of one authenticated session.
type clients struct {
	provider *gophercloud.ProviderClient
	compute  *gophercloud.ServiceClient
	image    *gophercloud.ServiceClient
	// network is nil when the cloud has no Neutron (then networks, ports
	// and floating IPs cannot be used).
	network *gophercloud.ServiceClient
	// volume is set only for use_blockstorage_volume.
	volume *gophercloud.ServiceClient
	// region is the region of the compute endpoint in use, from the
	// catalog when the template names none.
	region string
}

// StepAuthenticate logs in to Keystone and finds the service endpoints.
// It is the build's first network call: Prepare makes none.
type StepAuthenticate struct{}

func (s *StepAuthenticate) Run(ctx context.Context, state multistep.StateBag) multistep.StepAction {
	c := state.Get("config").(*Config)
	ui := state.Get("ui").(packersdk.Ui)
	ui.Say(fmt.Sprintf("Authenticating to %s...", c.authOpts.IdentityEndpoint))
	var base http.RoundTripper
	if c.PackerDebug {
		// -debug: every request, as the official builder prints them.
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = c.tlsConfig
		base = &debugTransport{ui: ui, base: t, secrets: c.secrets()}
	}
	cl, err := newClients(ctx, &c.AccessConfig, c.UseBlockStorageVolume, base)
	if err != nil {
		return halt(state, err)
	}
	state.Put("clients", cl)
	return multistep.ActionContinue
}

func (s *StepAuthenticate) Cleanup(multistep.StateBag) {}

func newClients(ctx context.Context, ac *AccessConfig, needVolume bool, base http.RoundTripper) (*clients, error) {
	provider, err := openstack.NewClient(ac.authOpts.IdentityEndpoint)
	if err != nil {
		return nil, fmt.Errorf("identity_endpoint: %w", err)
	}
	if base == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = ac.tlsConfig
		base = t
	}
	provider.HTTPClient = http.Client{Transport: &httpretry.Transport{
		Base:        base,
		RetryStatus: httpretry.GatewayStatus,
		// A loaded cloud throttles in bursts: ~30 s of backoff, more
		// when it sends Retry-After.
		Attempts: 8,
		Logf:     func(f string, a ...any) { log.Printf("[DEBUG] openstack: "+f, a...) },
	}}
	provider.UserAgent.Prepend("packer-plugin-fatimage")
	if err := openstack.Authenticate(ctx, provider, ac.authOpts); err != nil {
		return nil, fmt.Errorf("authenticating to %s: %w", ac.authOpts.IdentityEndpoint, err)
	}
	eo := ac.endpointOpts
	cl := &clients{provider: provider}
	if cl.compute, err = openstack.NewComputeV2(provider, eo); err != nil {
		return nil, fmt.Errorf("finding the compute (Nova) endpoint in region %q, interface %s: %w", eo.Region, ac.endpointName(), err)
	}
	cl.region = eo.Region
	if cl.region == "" {
		cl.region = catalogRegion(provider, "compute", cl.compute.Endpoint)
	}
	if cl.image, err = openstack.NewImageV2(provider, eo); err != nil {
		return nil, fmt.Errorf("finding the image (Glance) endpoint in region %q, interface %s: %w", eo.Region, ac.endpointName(), err)
	}
	if cl.network, err = openstack.NewNetworkV2(provider, eo); err != nil {
		log.Printf("[DEBUG] no network endpoint: %s", err)
		cl.network = nil
	}
	if needVolume {
		if cl.volume, err = openstack.NewBlockStorageV3(provider, eo); err != nil {
			return nil, fmt.Errorf("use_blockstorage_volume: finding the volume (Cinder v3) endpoint in region %q, interface %s: %w", eo.Region, ac.endpointName(), err)
		}
	}
	return cl, nil
}

// catalogRegion finds the region of the catalog endpoint gophercloud
// picked for a service.
func catalogRegion(p *gophercloud.ProviderClient, service, endpoint string) string {
	res, ok := p.GetAuthResult().(tokens.CreateResult)
	if !ok {
		return ""
	}
	cat, err := res.ExtractServiceCatalog()
	if err != nil {
		return ""
	}
	norm := func(u string) string { return strings.TrimRight(u, "/") }
	for _, e := range cat.Entries {
		if e.Type != service {
			continue
		}
		for _, ep := range e.Endpoints {
			if u := norm(ep.URL); u != "" && strings.HasPrefix(norm(endpoint), u) {
				return ep.Region
			}
		}
	}
	return ""
}

// needNetwork fails clearly when an option needs Neutron and the cloud has
// none.
func (cl *clients) needNetwork(option string) error {
	if cl.network == nil {
		return fmt.Errorf("%s: needs the network (Neutron) service, which the catalog does not list", option)
	}
	return nil
}
