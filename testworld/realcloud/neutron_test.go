//go:build realcloud

package realcloud

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/portsbinding"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
)

// requireAgentNetworking checks, for a running guest, what Neutron's
// agents did: the guest's tap (named as Nova names it, "tap" and the port
// id's first 11 characters) is a port of the guests' bridge, and the Linux
// bridge agent found it and reported the port ACTIVE, bound to the compute
// host as a bridge VIF; and the guest's eth0 address is a lease from the
// network's DHCP port (Neutron's dnsmasq), not one the guest host set.
func requireAgentNetworking(t *testing.T, tr *Tier, cc *gophercloud.ServiceClient, id string) {
	t.Helper()
	nc := client(t, tr, true, openstack.NewNetworkV2)
	port := onlyPort(t, nc, ports.ListOpts{DeviceID: id})
	if port.Status != "ACTIVE" || port.HostID != "realcloud" || port.VIFType != "bridge" {
		t.Errorf("the guest's port %s: status %s, binding host %q, vif_type %q; want ACTIVE, realcloud, bridge",
			port.ID, port.Status, port.HostID, port.VIFType)
	}
	tap := "tap" + port.ID[:11]
	if _, err := os.Stat(filepath.Join("/sys/class/net", GuestNetwork.Bridge, "brif", tap)); err != nil {
		t.Errorf("the guest's tap %s is not a port of bridge %s: %v", tap, GuestNetwork.Bridge, err)
	}
	dhcp := onlyPort(t, nc, ports.ListOpts{NetworkID: port.NetworkID, DeviceOwner: "network:dhcp"})
	if len(dhcp.FixedIPs) == 0 || len(port.FixedIPs) == 0 {
		t.Fatalf("no fixed IPs: guest port %+v, DHCP port %+v", port.FixedIPs, dhcp.FixedIPs)
	}
	// systemd-networkd's lease: the address and the server that gave it.
	out, err := guestRun(t, cc, id, "ip -4 -o addr show dev eth0; sudo cat /run/systemd/netif/leases/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"inet " + port.FixedIPs[0].IPAddress + "/24", " dynamic ",
		"ADDRESS=" + port.FixedIPs[0].IPAddress, "SERVER_ADDRESS=" + dhcp.FixedIPs[0].IPAddress,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the guest's eth0 and DHCP lease lack %q:\n%s", want, out)
		}
	}
}

type boundPort struct {
	ports.Port
	portsbinding.PortsBindingExt
}

// onlyPort is the one port the filter finds, with its binding (admin).
func onlyPort(t *testing.T, nc *gophercloud.ServiceClient, opts ports.ListOpts) boundPort {
	t.Helper()
	pages, err := ports.List(nc, opts).AllPages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var all []boundPort
	if err := ports.ExtractPortsInto(pages, &all); err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 {
		t.Fatalf("ports %+v: %d, want one", opts, len(all))
	}
	return all[0]
}
