package openstack

import (
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/hashicorp/packer-plugin-sdk/multistep"
)

// Tests of the behaviours the table of differences in
// docs/builders/openstack.mdx lists: each shows what we do where the
// official builder does otherwise.

// networkLab is a lab with clients and its two networks' IDs.
func networkLab(t *testing.T) (l *lab, cl *clients, labNet, public string) {
	t.Helper()
	l = newLab(t, nil)
	c := l.config(t)
	cl, err := newClients(bg, &c.AccessConfig, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	labNet, _ = findNetwork(bg, cl, "test", "lab-net")
	public, _ = findNetwork(bg, cl, "test", "public")
	return l, cl, labNet, public
}

// The lab has lab-net (10.213.0.0/16), listed first by Neutron, and public
// (172.24.4.0/24). The official builder takes the first subnet Neutron
// lists inside any of the CIDRs; we take the CIDRs in the template's order.
func TestDifferenceDiscoveryCIDRsOrder(t *testing.T) {
	_, cl, labNet, public := networkLab(t)
	for _, tc := range []struct {
		cidrs []string
		want  string
	}{
		{[]string{"172.24.0.0/16", "10.0.0.0/8"}, public},
		{[]string{"10.0.0.0/8", "172.24.0.0/16"}, labNet},
	} {
		if got, err := discoverNetwork(bg, cl, tc.cidrs); err != nil || got != tc.want {
			t.Errorf("%v: network %s (%v), want %s", tc.cidrs, got, err, tc.want)
		}
	}
}

// The floating IP goes to the port on instance_floating_ip_net, else to
// the port on the template's first network; a network the server is not
// on is an error (the official builder silently takes Nova's first
// interface).
func TestDifferenceFloatingIPPort(t *testing.T) {
	l, cl, labNet, public := networkLab(t)
	const server = "5d0c3f5e-8a1b-4c2d-9e3f-0a1b2c3d4e5f"
	port := func(net string) string {
		dev := server
		p, err := ports.Create(bg, cl.network, ports.CreateOpts{NetworkID: net, DeviceID: dev}).Extract()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ports.Delete(bg, cl.network, p.ID) })
		return p.ID
	}
	p1, p2 := port(labNet), port(labNet)
	for _, tc := range []struct {
		name     string
		kv       []any
		want     string
		wantErrs string
	}{
		{"first network", []any{"networks", []string{labNet}}, min(p1, p2), ""},
		{"first port", []any{"ports", []string{max(p1, p2)}}, max(p1, p2), ""},
		{"instance_floating_ip_net", []any{"instance_floating_ip_net", "lab-net"}, min(p1, p2), ""},
		{"instance_floating_ip_net not on the server", []any{"instance_floating_ip_net", public}, "",
			"instance_floating_ip_net: server " + server + " has no port on network " + public},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := serverPort(bg, cl, l.config(t, tc.kv...), server)
			if tc.wantErrs != "" {
				if err == nil || err.Error() != tc.wantErrs {
					t.Errorf("err %v, want %q", err, tc.wantErrs)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("port %s (%v), want %s", got, err, tc.want)
			}
		})
	}
}

// floating_ip_network naming a network that is not external fails where
// Neutron refuses the allocation, naming the option (the official builder
// checks a name itself, and leaves an ID to Neutron).
func TestDifferenceFloatingIPNetworkNotExternal(t *testing.T) {
	l := newLab(t, nil)
	_, _, _, err := build(t, bg, l, nil, "floating_ip_network", "lab-net")
	if err == nil || !strings.Contains(err.Error(), "floating_ip_network: allocating a floating IP on ") ||
		!strings.Contains(err.Error(), "is not a valid external network") {
		t.Fatalf("err %v", err)
	}
	l.assertEmpty(t)
}

// ssh_password makes no temporary key or keypair, as in the official
// builder, unless temporary_key_pair_name asks for one; communicator none
// and WinRM with winrm_password make none either (the official builder
// makes a keypair nothing uses).
func TestKeyPairCreation(t *testing.T) {
	l := newLab(t, nil)
	for _, tc := range []struct {
		name string
		kv   []any
		want bool
	}{
		{"ssh key", []any{"communicator", "ssh", "ssh_username", "rocky"}, true},
		{"ssh_password", []any{"communicator", "ssh", "ssh_username", "rocky", "ssh_password", "ssh-pw-4a1b"}, false},
		{"ssh_password with temporary_key_pair_name", []any{"communicator", "ssh", "ssh_username", "rocky", "ssh_password", "ssh-pw-4a1b", "temporary_key_pair_name", "tmp-kp"}, true},
		{"communicator none", nil, false},
		{"winrm with winrm_password", []any{"communicator", "winrm", "winrm_username", "Administrator", "winrm_password", "Pw-1"}, false},
		{"winrm without winrm_password", []any{"communicator", "winrm", "winrm_username", "Administrator"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := l.config(t, tc.kv...)
			state, _ := newState(t, c)
			var made bool
			runSteps(t, bg, state, &StepAuthenticate{}, &StepSSHKey{}, &StepKeyPair{}, probe(func(state multistep.StateBag) {
				_, made = state.GetOk("keypair_name")
			}), haltStep{})
			if made != tc.want {
				t.Errorf("keypair made: %v, want %v (private key %d bytes)", made, tc.want, len(c.Comm.SSHPrivateKey))
			}
			if !tc.want && len(c.Comm.SSHPrivateKey) != 0 {
				t.Error("a temporary key was made")
			}
			l.assertEmpty(t)
		})
	}
}

// reuse_ips: two builds that list the same free floating IP must not both
// take it (packer #4551; Neutron moves an attached IP to whichever port
// asks last). The attach is conditional on the IP's revision, so the
// build with the stale list takes the next free one.
func TestReuseIPsRace(t *testing.T) {
	_, cl, labNet, public := networkLab(t)
	var fips []string
	for range 2 {
		f, err := floatingips.Create(bg, cl.network, floatingips.CreateOpts{FloatingNetworkID: public}).Extract()
		if err != nil {
			t.Fatal(err)
		}
		fips = append(fips, f.ID)
		t.Cleanup(func() { floatingips.Delete(bg, cl.network, f.ID) })
	}
	mine, other := newPort(t, cl, labNet), newPort(t, cl, labNet)
	stale, err := freeFloatingIPs(bg, cl, public)
	if err != nil || len(stale) != 2 {
		t.Fatalf("free floating IPs %v %v", stale, err)
	}
	// The other build takes the first one after this build listed it.
	if _, err := floatingips.Update(bg, cl.network, stale[0].ID, floatingips.UpdateOpts{PortID: &other}).Extract(); err != nil {
		t.Fatal(err)
	}
	got, err := claimFloatingIP(bg, cl, stale, mine, public)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != stale[1].ID || got.PortID != mine {
		t.Errorf("claimed %s on port %s, want %s on %s", got.ID, got.PortID, stale[1].ID, mine)
	}
	if f, _ := floatingips.Get(bg, cl.network, stale[0].ID).Extract(); f == nil || f.PortID != other {
		t.Errorf("the other build's floating IP was taken from it: %+v", f)
	}
	// Nothing left free: the error says so.
	if _, err := claimFloatingIP(bg, cl, stale[:1], mine, public); err == nil || !strings.Contains(err.Error(), "no free (DOWN, unattached) floating IP on network "+public) {
		t.Errorf("err %v", err)
	}
	for _, f := range fips {
		none := ""
		floatingips.Update(bg, cl.network, f, floatingips.UpdateOpts{PortID: &none})
	}
}

func newPort(t *testing.T, cl *clients, net string) string {
	t.Helper()
	p, err := ports.Create(bg, cl.network, ports.CreateOpts{NetworkID: net}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ports.Delete(bg, cl.network, p.ID) })
	return p.ID
}
