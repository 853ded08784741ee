package cloud

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
)

// TestServicesHaveOwnLocks holds one service's lock and shows that every
// other service still answers (the calls are ones that touch only their
// own service: a server list without details, for instance, needs no
// addresses from Neutron). With the old single mutex, a busy compute
// service stalled Glance, Neutron and Cinder too.
func TestServicesHaveOwnLocks(t *testing.T) {
	l := newLab(t, nil)
	cl := l.clients()
	calls := map[string]func(ctx context.Context) error{
		SvcCompute: func(ctx context.Context) error {
			_, err := servers.ListSimple(cl.compute, nil).AllPages(ctx)
			return err
		},
		SvcImage: func(ctx context.Context) error {
			_, err := images.List(cl.image, nil).AllPages(ctx)
			return err
		},
		SvcNetwork: func(ctx context.Context) error {
			_, err := networks.List(cl.network, nil).AllPages(ctx)
			return err
		},
		SvcVolume: func(ctx context.Context) error {
			_, err := volumes.List(cl.volume, nil).AllPages(ctx)
			return err
		},
	}
	locks := map[string]*sync.Mutex{
		SvcCompute: &l.c.compute.mu, SvcImage: &l.c.image.mu,
		SvcNetwork: &l.c.network.mu, SvcVolume: &l.c.volume.mu,
	}
	for held, mu := range locks {
		t.Run("holding "+held, func(t *testing.T) {
			mu.Lock()
			defer mu.Unlock()
			for svc, call := range calls {
				if svc == held {
					continue
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				err := call(ctx)
				cancel()
				if err != nil {
					t.Errorf("%s while %s's lock is held: %v", svc, held, err)
				}
			}
			// The held service itself must block: proof that the test
			// holds the lock the handlers use.
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			if err := calls[held](ctx); err == nil {
				t.Errorf("%s answered although its lock is held", held)
			}
		})
	}
}
