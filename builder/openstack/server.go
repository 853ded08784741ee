package openstack

import (
	"context"
	"fmt"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
)

// waitServer waits for a server to reach status want, failing at once if it
// goes to ERROR (with Nova's fault message) or disappears.
func waitServer(ctx context.Context, cl *clients, id, want string, timeout time.Duration) (*servers.Server, error) {
	var got *servers.Server
	err := waitFor(ctx, fmt.Sprintf("server %s to become %s", id, want), timeout, func(ctx context.Context) (string, bool, error) {
		srv, err := servers.Get(ctx, cl.compute, id).Extract()
		if err != nil {
			if isNotFound(err) {
				return "gone", false, gone("server %s disappeared", id)
			}
			return "", false, err
		}
		got = srv
		switch srv.Status {
		case want:
			return srv.Status, true, nil
		case "ERROR":
			return srv.Status, false, terminal("server %s went to ERROR: %s", id, faultMessage(srv))
		case "DELETED", "SOFT_DELETED":
			return srv.Status, false, terminal("server %s was deleted", id)
		}
		return srv.Status, false, nil
	})
	return got, err
}

func faultMessage(srv *servers.Server) string {
	if srv.Fault.Message == "" {
		return "Nova gave no fault message"
	}
	if srv.Fault.Code != 0 {
		return fmt.Sprintf("%s (code %d)", srv.Fault.Message, srv.Fault.Code)
	}
	return srv.Fault.Message
}

// deleteServer deletes a server and waits until it is gone, so volumes
// and ports it held are free. Idempotent: a missing server is deleted.
func deleteServer(ctx context.Context, cl *clients, id string, force bool, timeout time.Duration) error {
	var err error
	if force {
		err = servers.ForceDelete(ctx, cl.compute, id).ExtractErr()
	} else {
		err = servers.Delete(ctx, cl.compute, id).ExtractErr()
	}
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting server %s: %w", id, err)
	}
	return waitFor(ctx, fmt.Sprintf("server %s to be deleted", id), timeout, func(ctx context.Context) (string, bool, error) {
		srv, err := servers.Get(ctx, cl.compute, id).Extract()
		if isNotFound(err) {
			return "gone", true, nil
		}
		if err != nil {
			return "", false, err
		}
		return srv.Status, srv.Status == "DELETED", nil
	})
}

func listServers(ctx context.Context, cl *clients, opts servers.ListOpts) ([]servers.Server, error) {
	pages, err := servers.List(cl.compute, opts).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	return servers.ExtractServers(pages)
}
