//go:build realcloud

package realcloud

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/portsbinding"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
)

// requireAgentNetworking checks, for a running guest, what Neutron's
// agents did: the guest's tap (named as Nova names it, "tap" and the port
// id's first 11 characters) is a port of the network's bridge the Linux
// bridge agent made (brq and the network id's first 11 characters, with
// the host's interface into the provider network as its uplink), and the
// agent found it and reported the port ACTIVE, bound to the compute host
// as a bridge VIF; and the guest's eth0 address is a lease from the
// network's DHCP port (Neutron's dnsmasq), not one the guest host set.
func requireAgentNetworking(t *testing.T, tr *Tier, cc *gophercloud.ServiceClient, id string) {
	t.Helper()
	nc := client(t, tr, true, openstack.NewNetworkV2)
	port := onlyPort(t, nc, ports.ListOpts{DeviceID: id})
	if port.Status != "ACTIVE" || port.HostID != "realcloud" || port.VIFType != "bridge" {
		t.Errorf("the guest's port %s: status %s, binding host %q, vif_type %q; want ACTIVE, realcloud, bridge",
			port.ID, port.Status, port.HostID, port.VIFType)
	}
	bridge := "brq" + port.NetworkID[:11]
	for _, dev := range []string{"tap" + port.ID[:11], GuestInterface} {
		if _, err := os.Stat(filepath.Join("/sys/class/net", bridge, "brif", dev)); err != nil {
			t.Errorf("%s is not a port of the network's bridge %s: %v", dev, bridge, err)
		}
	}
	dhcp := onlyPort(t, nc, ports.ListOpts{NetworkID: port.NetworkID, DeviceOwner: "network:dhcp"})
	if len(dhcp.FixedIPs) == 0 || len(port.FixedIPs) == 0 {
		t.Fatalf("no fixed IPs: guest port %+v, DHCP port %+v", port.FixedIPs, dhcp.FixedIPs)
	}
	// systemd-networkd's lease: the address and the server that gave it.
	out, err := guestRun(t, cc, id, "ip -4 -o addr show dev eth0; sudo cat /run/systemd/netif/leases/*; ip route get 169.254.169.254")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"inet " + port.FixedIPs[0].IPAddress + "/24", " dynamic ",
		"ADDRESS=" + port.FixedIPs[0].IPAddress, "SERVER_ADDRESS=" + dhcp.FixedIPs[0].IPAddress,
		// the DHCP agent's route to the metadata service: the router's
		// haproxy (the L3 agent's metadata proxy)
		"169.254.169.254 via " + routerAddress + " dev eth0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the guest's eth0 and DHCP lease lack %q:\n%s", want, out)
		}
	}
}

// requireRouterFloatingIP checks that a floating IP is the L3 agent's: one
// associated with the guest's port goes ACTIVE, the router's namespace
// DNATs it to the port's fixed address, and SSH through it reaches the
// guest (its security group opens 22) from the host's address on the
// external bridge, while the guest's eth0 holds only its fixed address.
func requireRouterFloatingIP(t *testing.T, tr *Tier, id string) {
	t.Helper()
	ctx := context.Background()
	port := onlyPort(t, client(t, tr, true, openstack.NewNetworkV2), ports.ListOpts{DeviceID: id})
	nc := client(t, tr, false, openstack.NewNetworkV2)
	fip, err := floatingips.Create(ctx, nc, floatingips.CreateOpts{FloatingNetworkID: networkID(t, tr, FloatingNetwork), PortID: port.ID}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = floatingips.Delete(ctx, nc, fip.ID).ExtractErr() })
	var out string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
		if out, err = guestRunAt(t, fip.FloatingIP, id, "echo $SSH_CONNECTION; ip -4 -o addr show dev eth0"); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("no SSH through floating IP %s: %v", fip.FloatingIP, err)
	}
	host := ExternalGateway
	if !strings.HasPrefix(out, host+" ") || strings.Contains(out, fip.FloatingIP) {
		t.Errorf("SSH through %s: want the connection from %s and no floating IP on eth0:\n%s", fip.FloatingIP, host, out)
	}
	// the host's own address on the provider network is a client like any
	// other: its connections to the fixed address pass the same rules
	requireGroupEnforced(t, id, fip.FloatingIP, port.FixedIPs[0].IPAddress)
	if got, err := floatingips.Get(ctx, nc, fip.ID).Extract(); err != nil || got.Status != "ACTIVE" {
		t.Errorf("floating IP %s: %+v, %v; want ACTIVE", fip.FloatingIP, got, err)
	}
	nat, err := exec.Command("ip", "netns", "exec", "qrouter-"+onlyRouter(t, nc).ID, "iptables-save", "-t", "nat").CombinedOutput()
	want := fmt.Sprintf("-d %s/32 -j DNAT --to-destination %s", fip.FloatingIP, port.FixedIPs[0].IPAddress)
	if err != nil || !strings.Contains(string(nat), want) {
		t.Errorf("the router's namespace lacks %q (%v):\n%s", want, err, nat)
	}
}

// requireGroupEnforced checks that the Linux bridge agent enforces the
// guest's security groups on what reaches it at each of addrs (the first
// one answers SSH): with a server listening on a port realcloud-ssh does
// not open (the guest itself reaches it), a connection from the host
// times out (the agent drops it: a refusal would mean it reached the
// guest), while port 22, which the group opens, answers.
func requireGroupEnforced(t *testing.T, id string, addrs ...string) {
	t.Helper()
	const closed = "8080"
	if _, err := guestRunAt(t, addrs[0], id, "sudo systemd-run --unit rc-closed-port python3 -m http.server "+closed+
		" && for i in $(seq 30); do curl -s -o /dev/null http://127.0.0.1:"+closed+"/ && exit 0; sleep 1; done; exit 1"); err != nil {
		t.Fatalf("a listener on the guest's port %s: %v", closed, err)
	}
	for _, addr := range addrs {
		c, err := net.DialTimeout("tcp", net.JoinHostPort(addr, closed), 5*time.Second)
		if err == nil {
			c.Close()
			t.Errorf("port %s, which the guest's groups do not open, answered at %s", closed, addr)
		} else if ne := net.Error(nil); !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("port %s at %s: %v; want a timeout (dropped by the agent)", closed, addr, err)
		}
		c, err = net.DialTimeout("tcp", net.JoinHostPort(addr, "22"), 5*time.Second)
		if err != nil {
			t.Errorf("port 22, which realcloud-ssh opens, at %s: %v", addr, err)
		} else {
			c.Close()
		}
	}
}

// requireRouterSNAT checks that a connection the guest opens to the
// external network completes through the router: the host, listening on
// its external address, sees it come from the router's gateway address
// (the L3 agent's SNAT), and the guest gets the answer (the router's
// replies are tracked in the conntrack zone of the guest's port).
func requireRouterSNAT(t *testing.T, tr *Tier, cc *gophercloud.ServiceClient, id string) {
	t.Helper()
	l, err := net.Listen("tcp4", net.JoinHostPort(ExternalGateway, "0"))
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan string, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case seen <- r.RemoteAddr:
		default:
		}
		fmt.Fprintln(w, "snat-answered")
	})}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()
	out, err := guestRun(t, cc, id, "curl -sS --max-time 20 http://"+l.Addr().String()+"/")
	if err != nil || !strings.Contains(out, "snat-answered") {
		t.Fatalf("the guest's connection to %s through the router: %v\n%s", l.Addr(), err, out)
	}
	r := onlyRouter(t, client(t, tr, false, openstack.NewNetworkV2))
	if len(r.GatewayInfo.ExternalFixedIPs) == 0 {
		t.Fatalf("router %s has no gateway address: %+v", r.ID, r.GatewayInfo)
	}
	from, _, _ := net.SplitHostPort(<-seen)
	if want := r.GatewayInfo.ExternalFixedIPs[0].IPAddress; from != want {
		t.Errorf("the guest's connection reached the host from %s, want the router's gateway address %s", from, want)
	}
}

// onlyRouter is the tier's router.
func onlyRouter(t *testing.T, nc *gophercloud.ServiceClient) routers.Router {
	t.Helper()
	pages, err := routers.List(nc, routers.ListOpts{Name: RouterName}).AllPages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rs, err := routers.ExtractRouters(pages)
	if err != nil || len(rs) != 1 {
		t.Fatalf("router %s: %v, %v", RouterName, rs, err)
	}
	return rs[0]
}

// routerAddress is the tenant subnet's gateway, the router's qr- port.
const routerAddress = "10.42.0.1"

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
