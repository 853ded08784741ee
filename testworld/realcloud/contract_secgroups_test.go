//go:build realcloud

package realcloud

// Security group rules as the guest sees them: on the tier Neutron's
// Linux bridge agent filters the guest's tap, on the double the lab's
// VMs' ports are filtered on the host. Both need a real guest, so the
// double's side runs on a lab (its cloud boots the lab's VMs) rather
// than on the in-memory hypervisor of the other checks.

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	"golang.org/x/crypto/ssh"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
)

func init() {
	contractChecks = append(contractChecks, struct {
		name  string
		check func(*testing.T, target)
	}{"neutron/guest-security-groups", checkGuestSecurityGroups})
}

// labGuests is a target whose servers are the lab's VMs: a lab started
// for the test, its cloud double as the lab's user.
func labGuests(t *testing.T) target {
	l, err := lab.Start(context.Background(), lab.Options{Dir: t.TempDir(), Logf: t.Logf})
	if err != nil {
		t.Fatalf("a lab for the double's guests: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	login := func(user, pw, project string) *gophercloud.ProviderClient {
		p, err := openstack.AuthenticatedClient(context.Background(), gophercloud.AuthOptions{
			IdentityEndpoint: l.Cloud.AuthURL(), Username: user, Password: pw, DomainName: "Default",
			Scope: &gophercloud.AuthScope{ProjectName: project, DomainName: "Default"},
		})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	return target{member: login("lab", l.CloudPassword, "lab"), admin: login("lab-admin", l.AdminPassword, "admin"),
		project: l.Cloud.ProjectID("lab"), tenant: "lab-net", external: "public", shareProject: l.Cloud.ProjectID(lab.ShareProject),
		base: lab.BaseImageName, guestImage: lab.BaseImageName, metadata: doubleMetadata(l.Cloud)}
}

// checkGuestSecurityGroups boots a server as the builder does (its
// security_groups by name, a keypair, the tenant network) in a group of
// its own opening TCP 22 only. From the host, 22 answers; a port the
// guest listens on (and reaches itself) is dropped, no answer rather
// than a refusal; a rule added for it while the server runs opens it.
func checkGuestSecurityGroups(t *testing.T, tg target) {
	if tg.guests != nil {
		tg = tg.guests(t)
	}
	ctx := context.Background()
	nc := tg.client(t, openstack.NewNetworkV2)
	cc := tg.client(t, openstack.NewComputeV2)
	sg, err := groups.Create(ctx, nc, groups.CreateOpts{Name: uniqueName("contract-sg"), Description: "contract: TCP 22 only"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // after the server is gone (cleanups run last first)
		// Nova deletes the server's port after the server: in use until then
		err := groups.Delete(ctx, nc, sg.ID).ExtractErr()
		for deadline := time.Now().Add(time.Minute); gophercloud.ResponseCodeIs(err, 409) && time.Now().Before(deadline); {
			time.Sleep(time.Second)
			err = groups.Delete(ctx, nc, sg.ID).ExtractErr()
		}
		if err != nil {
			t.Errorf("deleting group %s: %v", sg.ID, err)
		}
	})
	addRule := func(port int) {
		t.Helper()
		if _, err := rules.Create(ctx, nc, rules.CreateOpts{SecGroupID: sg.ID, Direction: rules.DirIngress, EtherType: rules.EtherType4,
			Protocol: rules.ProtocolTCP, PortRangeMin: port, PortRangeMax: port, RemoteIPPrefix: "0.0.0.0/0"}).Extract(); err != nil {
			t.Fatal(err)
		}
	}
	addRule(22)
	kpName := uniqueName("contract-sg")
	signer, _ := importGuestKey(t, cc, kpName)
	opts := servers.CreateOpts{Name: uniqueName("contract-sg"), FlavorRef: "1", SecurityGroups: []string{sg.Name},
		ImageRef: findImage(t, tg.client(t, openstack.NewImageV2), tg.guestImage).ID, Metadata: map[string]string{"ansible_init_disable": "true"},
		Networks: []servers.Network{{UUID: networkNamed(t, nc, tg.tenant)}}}
	s := tg.create(t, opts, kpName)
	waitFor(t, "the new server", serverStatus(cc, s.ID), func(st string) bool { return st == "ACTIVE" || st == "ERROR" })
	if s, err = servers.Get(ctx, cc, s.ID).Extract(); err != nil || s.Status != "ACTIVE" {
		t.Fatalf("server %s: %+v %v", opts.Name, s, err)
	}
	ip := fixedAddress(s)
	guestKeys[s.ID] = signer
	// the guest listens on 8080 and reaches it at its own address
	listen := "setsid python3 -m http.server --bind 0.0.0.0 8080 </dev/null >/dev/null 2>&1 & " +
		"for i in $(seq 100); do curl -fsS -o /dev/null http://" + ip + ":8080/ && exit 0; sleep 0.2; done; exit 1"
	var lastErr error
	for deadline := time.Now().Add(4 * time.Minute); ; time.Sleep(2 * time.Second) {
		if _, lastErr = guestRunAt(t, ip, s.ID, listen); lastErr == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no SSH on TCP 22, which the group opens: %v", lastErr)
		}
	}
	if err := labtest.DialTCP(ip+":8080", 3*time.Second); !labtest.Dropped(err) {
		t.Errorf("TCP 8080, which the group does not open: %v, want no answer (dropped, not refused)", err)
	}
	addRule(8080)
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
		if lastErr = labtest.DialTCP(ip+":8080", 3*time.Second); lastErr == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("TCP 8080 once a rule opened it: %v", lastErr)
		}
	}
	if out, err := guestRunAt(t, ip, s.ID, "echo still"); err != nil || strings.TrimSpace(out) != "still" {
		t.Errorf("SSH after the rule was added: %q %v", out, err)
	}
}

// importGuestKey imports a new ed25519 key as keypair name, deleted when
// the test ends, as the builder imports its own: the guest's signer and
// the authorized_keys line.
func importGuestKey(t *testing.T, cc *gophercloud.ServiceClient, name string) (ssh.Signer, string) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sshPub, _ := ssh.NewPublicKey(pub)
	signer, _ := ssh.NewSignerFromKey(priv)
	authorized := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sshPub)))
	if _, err := keypairs.Create(context.Background(), cc, keypairs.CreateOpts{Name: name, PublicKey: authorized}).Extract(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { keypairs.Delete(context.Background(), cc, name, nil) })
	return signer, authorized
}
