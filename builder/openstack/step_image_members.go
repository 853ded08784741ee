package openstack

import (
	"context"
	"fmt"
	"net/http"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/members"
)

// acceptMembership accepts the sharing of image id for project member
// (image_auto_accept_members). Glance lets only the member project, or an
// admin, decide on a membership: the owner's own call works for admin
// credentials; otherwise the build's token is re-scoped to the member
// project, which Keystone allows when the credentials have a role there.
// Anything else cannot accept on a real cloud, and the error says so.
func acceptMembership(ctx context.Context, ac *AccessConfig, cl *clients, id, member string) error {
	accept := members.UpdateOpts{Status: "accepted"}
	_, err := members.Update(ctx, cl.image, id, member, accept).Extract()
	if err == nil || !gophercloud.ResponseCodeIs(err, http.StatusForbidden) {
		return err
	}
	p, err := openstack.NewClient(ac.authOpts.IdentityEndpoint)
	if err != nil {
		return err
	}
	p.HTTPClient = cl.provider.HTTPClient
	p.UserAgent = cl.provider.UserAgent
	scoped := gophercloud.AuthOptions{IdentityEndpoint: ac.authOpts.IdentityEndpoint, TokenID: cl.provider.Token(),
		Scope: &gophercloud.AuthScope{ProjectID: member}}
	if err := openstack.Authenticate(ctx, p, scoped); err != nil {
		return fmt.Errorf("project %s must accept image %s itself: Glance lets only the member project or an admin accept, "+
			"and these credentials cannot act for project %s (%v); accept it there (openstack image set --accept %s) "+
			"or drop image_auto_accept_members", member, id, member, err, id)
	}
	img, err := openstack.NewImageV2(p, ac.endpointOpts)
	if err != nil {
		return fmt.Errorf("finding the image (Glance) endpoint as project %s: %w", member, err)
	}
	_, err = members.Update(ctx, img, id, member, accept).Extract()
	return err
}
