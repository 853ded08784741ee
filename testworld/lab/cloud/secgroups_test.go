package cloud

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/secgroups"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
)

// fwString is a filter as one line per direction, for comparing.
func fwString(fw *Firewall) string {
	if fw == nil {
		return "<none>"
	}
	var b strings.Builder
	for _, d := range []struct {
		name string
		rs   []FirewallRule
	}{{"in", fw.Ingress}, {"out", fw.Egress}} {
		fmt.Fprintf(&b, "%s:", d.name)
		for _, r := range d.rs {
			fmt.Fprintf(&b, " %s/%d-%d/%s", r.Protocol, r.PortMin, r.PortMax, r.Remote)
		}
		b.WriteString("; ")
	}
	return b.String()
}

// TestSecurityGroupsReachMachines: a server's named groups are its
// port's, its machine boots with their IPv4 rules as its filter, and a
// rule added or removed, a port's groups changed, or a member of a
// remote group gone changes the filter of every machine it touches.
func TestSecurityGroupsReachMachines(t *testing.T) {
	l := newLab(t, nil)
	cl := l.clients()
	net := labNet(t, cl.network)
	sg, err := groups.Create(ctx, cl.network, groups.CreateOpts{Name: "ssh", Description: "ssh only"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if len(sg.Rules) != 2 || sg.Rules[0].Direction != "egress" || sg.Rules[1].EtherType != "IPv6" {
		t.Errorf("a new group's rules, want egress for IPv4 and IPv6: %+v", sg.Rules)
	}
	ssh, err := rules.Create(ctx, cl.network, rules.CreateOpts{SecGroupID: sg.ID, Direction: "ingress", EtherType: "IPv4",
		Protocol: "tcp", PortRangeMin: 22, PortRangeMax: 22, RemoteIPPrefix: "0.0.0.0/0"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	boot := func(name string, groups ...string) (*servers.Server, *fakeMachine) {
		s, err := servers.Create(ctx, cl.compute, servers.CreateOpts{Name: name, ImageRef: l.imageID, FlavorRef: testFlavor,
			Networks: []servers.Network{{UUID: net.ID}}, SecurityGroups: groups}, nil).Extract()
		if err != nil {
			t.Fatal(err)
		}
		s = waitServer(t, cl.compute, s.ID, "ACTIVE")
		return s, l.hv.machine(s.ID)
	}
	a, ma := boot("sg-a", "ssh")
	want := "in: tcp/22-22/0.0.0.0/0; out: /0-0/; "
	if got := fwString(ma.firewall()); got != want {
		t.Errorf("the ssh group's filter: %s, want %s", got, want)
	}
	// a rule added at runtime opens its port
	web, err := rules.Create(ctx, cl.network, rules.CreateOpts{SecGroupID: sg.ID, Direction: "ingress", EtherType: "IPv4",
		Protocol: "tcp", PortRangeMin: 8000, PortRangeMax: 8080}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if got := fwString(ma.firewall()); got != "in: tcp/22-22/0.0.0.0/0 tcp/8000-8080/; out: /0-0/; " {
		t.Errorf("after a rule was added: %s", got)
	}
	_, err = rules.Create(ctx, cl.network, rules.CreateOpts{SecGroupID: sg.ID, Direction: "ingress", EtherType: "IPv4",
		Protocol: "tcp", PortRangeMin: 8000, PortRangeMax: 8080}).Extract()
	wantErrBody(t, "the same rule again", err, 409, "Security group rule already exists. Rule id is "+web.ID)
	if err := rules.Delete(ctx, cl.network, web.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if got := fwString(ma.firewall()); got != want {
		t.Errorf("after the rule was deleted: %s, want %s", got, want)
	}
	// the default group: ingress from its members, which are their fixed addresses
	b, mb := boot("sg-b")
	bIP := b.Addresses["lab-net"].([]any)[0].(map[string]any)["addr"].(string)
	if got := fwString(mb.firewall()); got != "in: /0-0/"+bIP+"/32; out: /0-0/; " {
		t.Errorf("the default group's filter: %s", got)
	}
	_, mc := boot("sg-c", "default")
	if got := fwString(mb.firewall()); !strings.Contains(got, bIP+"/32 /0-0/") {
		t.Errorf("a second member, want two remotes in b's filter: %s", got)
	}
	// a's port moved into the default group as well
	pages, _ := ports.List(cl.network, ports.ListOpts{DeviceID: a.ID}).AllPages(ctx)
	ps, _ := ports.ExtractPorts(pages)
	def := groupNamed(t, cl.network, "default")
	both := []string{sg.ID, def.ID}
	if _, err := ports.Update(ctx, cl.network, ps[0].ID, ports.UpdateOpts{SecurityGroups: &both}).Extract(); err != nil {
		t.Fatal(err)
	}
	if got := fwString(mc.firewall()); strings.Count(got, "/32") != 3 {
		t.Errorf("c's filter once a joined the default group, want three members: %s", got)
	}
	if err := groups.Delete(ctx, cl.network, sg.ID).ExtractErr(); !gophercloud.ResponseCodeIs(err, 409) {
		t.Errorf("deleting a group in use: %v, want 409", err)
	}
	if err := groups.Delete(ctx, cl.network, def.ID).ExtractErr(); !gophercloud.ResponseCodeIs(err, 409) {
		t.Errorf("deleting the default group: %v, want 409", err)
	}
	if err := servers.Delete(ctx, cl.compute, b.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	waitServerGone(t, cl.compute, b.ID)
	if got := fwString(mc.firewall()); strings.Count(got, "/32") != 2 {
		t.Errorf("c's filter once b was gone, want two members: %s", got)
	}
	if _, err := rules.Get(ctx, cl.network, ssh.ID).Extract(); err != nil {
		t.Errorf("GET the rule: %v", err)
	}
	// Nova's actions: the ssh group leaves the server, then joins it again
	if err := secgroups.RemoveServer(ctx, cl.compute, a.ID, "ssh").ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if got := fwString(ma.firewall()); strings.Contains(got, "tcp/22-22") {
		t.Errorf("a's filter once the ssh group left it: %s", got)
	}
	err = secgroups.RemoveServer(ctx, cl.compute, a.ID, "ssh").ExtractErr()
	wantErrBody(t, "removing a group the server is not in", err, 400, "not associated with the instance "+a.ID)
	if err := secgroups.AddServer(ctx, cl.compute, a.ID, "ssh").ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if got := fwString(ma.firewall()); !strings.Contains(got, "tcp/22-22/0.0.0.0/0") {
		t.Errorf("a's filter once the ssh group joined it again: %s", got)
	}
	got, _ := servers.Get(ctx, cl.compute, a.ID).Extract()
	if fmt.Sprint(got.SecurityGroups) != "[map[name:default] map[name:ssh]]" {
		t.Errorf("the server's groups: %v", got.SecurityGroups)
	}
}

// TestSecurityGroupRuleChecks: what Neutron refuses in a rule, and Nova
// in a server's groups.
func TestSecurityGroupRuleChecks(t *testing.T) {
	l := newLab(t, nil)
	cl := l.clients()
	sg, err := groups.Create(ctx, cl.network, groups.CreateOpts{Name: "checks"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		opts rules.CreateOpts
		code int
		want string
	}{
		{rules.CreateOpts{Direction: "ingress", EtherType: "IPv4", PortRangeMin: 22, PortRangeMax: 22}, 400, "Must also specify protocol if port range is given."},
		{rules.CreateOpts{Direction: "ingress", EtherType: "IPv4", Protocol: "tcp", PortRangeMin: 23, PortRangeMax: 22}, 400, "For TCP/UDP protocols, port_range_min must be"},
		{rules.CreateOpts{Direction: "ingress", EtherType: "IPv4", Protocol: "tcp", RemoteIPPrefix: "10.0.0.0/8", RemoteGroupID: sg.ID}, 400, "Only remote_ip_prefix or remote_group_id may be provided."},
		{rules.CreateOpts{Direction: "ingress", EtherType: "IPv6", Protocol: "tcp", RemoteIPPrefix: "10.0.0.0/8"}, 400, "Conflicting value ethertype IPv6 for CIDR 10.0.0.0/8"},
		{rules.CreateOpts{Direction: "ingress", EtherType: "IPv4", Protocol: "bogus"}, 400, "Security group rule protocol bogus not supported"},
		{rules.CreateOpts{Direction: "ingress", EtherType: "IPv4", Protocol: "tcp", SecGroupID: "0b7e1c5a-6a4f-4c53-9d8a-2a4b7f3c9e10"}, 404, "Security group 0b7e1c5a-6a4f-4c53-9d8a-2a4b7f3c9e10 does not exist"},
	} {
		if c.opts.SecGroupID == "" {
			c.opts.SecGroupID = sg.ID
		}
		_, err := rules.Create(ctx, cl.network, c.opts).Extract()
		wantErrBody(t, fmt.Sprintf("%+v", c.opts), err, c.code, c.want)
	}
	_, err = servers.Create(ctx, cl.compute, servers.CreateOpts{Name: "no-group", ImageRef: l.imageID, FlavorRef: testFlavor,
		Networks: []servers.Network{{UUID: labNet(t, cl.network).ID}}, SecurityGroups: []string{"nonesuch"}}, nil).Extract()
	wantErrBody(t, "a server in a missing group", err, 400, "Security group nonesuch not found.")
}

func groupNamed(t *testing.T, nc *gophercloud.ServiceClient, name string) groups.SecGroup {
	t.Helper()
	pages, err := groups.List(nc, groups.ListOpts{Name: name}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := groups.ExtractGroups(pages)
	if len(all) != 1 {
		t.Fatalf("groups named %s: %d", name, len(all))
	}
	return all[0]
}

// wantErrBody wants err to be an HTTP code answer whose body holds sub.
func wantErrBody(t *testing.T, what string, err error, code int, sub string) {
	t.Helper()
	var e gophercloud.ErrUnexpectedResponseCode
	if !errors.As(err, &e) || e.Actual != code || !strings.Contains(string(e.Body), sub) {
		t.Errorf("%s: %v, want HTTP %d with %q", what, err, code, sub)
	}
}
