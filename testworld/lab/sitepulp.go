package lab

import (
	"fmt"
	"net"
	"path/filepath"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/sitepulp"
)

// startSitePulp starts the site Pulp double on the lab gateway, empty, its
// API open to SitePulpUser and its content unguarded (the usual site
// set-up); it syncs from the Ark double when asked to.
func startSitePulp(o Options, gateway string) (*sitepulp.Server, error) {
	s, err := sitepulp.New(sitepulp.Options{
		Addr:     net.JoinHostPort(gateway, "0"),
		Username: SitePulpUser,
		Password: o.SitePulpPassword,
		Dir:      filepath.Join(o.Dir, "sitepulp"),
		Logf:     o.Logf,
	})
	if err == nil {
		err = s.Start()
	}
	if err != nil {
		return nil, fmt.Errorf("lab: starting the site Pulp double: %w", err)
	}
	return s, nil
}

// SetArkReachableFromVMs(false) makes the Ark double unreachable from the
// lab's VMs while the host (and so the site Pulp double) still reaches it,
// as at a site whose build network has no route to Ark. true undoes it;
// so does Close.
func (l *Lab) SetArkReachableFromVMs(ok bool) error { return l.SetServerReachableFromVMs("ark", ok) }

// ArkReachableFromVMs reports the state SetArkReachableFromVMs set.
func (l *Lab) ArkReachableFromVMs() bool { return l.ServerReachableFromVMs("ark") }
