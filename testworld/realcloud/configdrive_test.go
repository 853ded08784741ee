//go:build realcloud

package realcloud

import (
	"context"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
)

// A build with config_drive = true whose guest has no way to the metadata
// service: its only security group opens SSH in and nothing out, so
// 169.254.169.254 (through the router) is dropped at its port. Real Nova
// builds the config drive (genisoimage), the guest's cloud-init takes the
// builder's key and the server's metadata from it (its ConfigDrive data
// source), SSH through the floating IP works and the shell provisioner
// reads ansible_init_disable from the drive.
func TestGuestConfigDriveBuild(t *testing.T) {
	tr := tier(t)
	clean(t, tr)
	name := uniqueName("rc-cdrive")
	group := noEgressGroup(t, tr, name)
	r := mustBuild(t, tr, guestTemplateIn(t, tr, name, group, "config_drive = true", `
  provisioner "shell" {
    inline = [
      "curl -s --max-time 5 -o /dev/null http://169.254.169.254/ && echo metadata-reachable || echo metadata-unreachable",
      "sudo cat /var/lib/cloud/seed/config_drive/openstack/latest/meta_data.json",
      "sudo grep -o DataSourceConfigDrive /run/cloud-init/status.json | head -1",
    ]
  }
`))
	mustContain(t, r.Output(), "Creating server "+name, "Connected to SSH!", "metadata-unreachable",
		`"ansible_init_disable": "true"`, "DataSourceConfigDrive", "Creating image "+name+" from server")
	imageNamed(t, client(t, tr, false, openstack.NewImageV2), name)
}

// noEgressGroup is a security group of the member that opens TCP 22 in and
// has no egress rule (Neutron's default two are removed), deleted at the
// end.
func noEgressGroup(t *testing.T, tr *Tier, name string) string {
	t.Helper()
	ctx := context.Background()
	nc := client(t, tr, false, openstack.NewNetworkV2)
	g, err := groups.Create(ctx, nc, groups.CreateOpts{Name: name, Description: "SSH in, nothing out"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// the build's port may still hold it for a moment
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(2 * time.Second) {
			err := groups.Delete(ctx, nc, g.ID).ExtractErr()
			if err == nil || gophercloud.ResponseCodeIs(err, 404) || time.Now().After(deadline) {
				if err != nil && !gophercloud.ResponseCodeIs(err, 404) {
					t.Errorf("deleting security group %s: %v", name, err)
				}
				return
			}
		}
	})
	for _, rule := range g.Rules {
		if rule.Direction == string(rules.DirEgress) {
			if err := rules.Delete(ctx, nc, rule.ID).ExtractErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := rules.Create(ctx, nc, rules.CreateOpts{SecGroupID: g.ID, Direction: rules.DirIngress, EtherType: rules.EtherType4,
		Protocol: rules.ProtocolTCP, PortRangeMin: 22, PortRangeMax: 22, RemoteIPPrefix: "0.0.0.0/0"}).Extract(); err != nil {
		t.Fatal(err)
	}
	return name
}
