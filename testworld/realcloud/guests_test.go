//go:build realcloud

package realcloud

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"golang.org/x/crypto/ssh"
)

// A whole build with SSH on a real guest: real Nova boots the guest image
// as a lab VM (systemd, cloud-init, sshd), cloud-init takes the builder's
// imported keypair from real Nova's metadata API, the builder reaches sshd
// through the floating IP Neutron associated, a shell provisioner writes a
// file and reads meta_data.json (ansible_init_disable = "true" during the
// build), the guest is stopped and snapshotted (its disk written into
// Glance), and nothing is left. Then the image boots as a new server that
// answers SSH with the file and without ansible_init_disable.
func TestGuestSSHBuild(t *testing.T) {
	tr := tier(t)
	clean(t, tr)
	name := uniqueName("rc-guest")
	marker := "built-" + name
	r := mustBuild(t, tr, guestTemplate(t, tr, name, fmt.Sprintf(`
  provisioner "shell" {
    inline = [
      "echo %s | sudo tee /etc/rc-marker",
      "curl -sf http://169.254.169.254/openstack/latest/meta_data.json",
      "test -e /var/lib/ansible-init.done && echo ansible-init-ran || echo ansible-init-disabled",
    ]
  }
`, marker)))
	mustContain(t, r.Output(), "Creating server "+name, "Allocating a floating IP", "Connected to SSH!",
		`"ansible_init_disable": "true"`, "ansible-init-disabled", "Creating image "+name+" from server")
	ic := client(t, tr, false, openstack.NewImageV2)
	img := imageNamed(t, ic, name)
	if img.Status != images.ImageStatusActive || img.DiskFormat != "raw" {
		t.Fatalf("image %s: status %s, disk_format %s", img.ID, img.Status, img.DiskFormat)
	}
	// ansible-init (a oneshot unit) runs at the new server's boot: its
	// metadata has no ansible_init_disable.
	cc := client(t, tr, false, openstack.NewComputeV2)
	id, out := bootAndSSH(t, tr, cc, img.ID, name+"-boot",
		"cat /etc/rc-marker; curl -sf http://169.254.169.254/openstack/latest/meta_data.json; "+
			"for i in $(seq 60); do test -e /var/lib/ansible-init.done && break; sleep 1; done; "+
			"test -e /var/lib/ansible-init.done && echo ansible-init-ran")
	if !strings.Contains(out, marker) {
		t.Errorf("the new server has no /etc/rc-marker from the build:\n%s", out)
	}
	if strings.Contains(out, "ansible_init_disable") || !strings.Contains(out, name+"-boot") || !strings.Contains(out, "ansible-init-ran") {
		t.Errorf("the new server's metadata (its own name, no ansible_init_disable) and ansible-init:\n%s", out)
	}
	requireAgentNetworking(t, tr, cc, id)
	requireRouterSNAT(t, tr, cc, id)
	requireRouterFloatingIP(t, tr, id)
	guestConsoleAndReboot(t, cc, id)
	// A guest that powers itself off is SHUTOFF in Nova, as libvirt reports it.
	if _, err := guestRun(t, cc, id, "sudo systemctl poweroff"); err != nil {
		t.Logf("poweroff: %v (the connection may close first)", err)
	}
	if err := servers.WaitForStatus(ctxTimeout(t, 2*time.Minute), cc, id, "SHUTOFF"); err != nil {
		t.Errorf("server %s after the guest powered off: %v", id, err)
	}
}

// guestConsoleAndReboot: Nova's console output is the guest's console, and
// a soft reboot through Nova restarts the guest's init (a new PID 1 start
// time) and leaves it ACTIVE and answering SSH.
func guestConsoleAndReboot(t *testing.T, cc *gophercloud.ServiceClient, id string) {
	t.Helper()
	ctx := context.Background()
	console, err := servers.ShowConsoleOutput(ctx, cc, id, servers.ShowConsoleOutputOpts{Length: 200}).Extract()
	if err != nil || !strings.Contains(console, "cloud-init") {
		t.Errorf("console output of %s (%v):\n%s", id, err, console)
	}
	const initStart = "cut -d' ' -f22 /proc/1/stat"
	before, err := guestRun(t, cc, id, initStart)
	if err != nil {
		t.Fatalf("SSH to %s: %v", id, err)
	}
	if err := servers.Reboot(ctx, cc, id, servers.RebootOpts{Type: servers.SoftReboot}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	var after string
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
		s, err := servers.Get(ctx, cc, id).Extract()
		if err != nil || s.Status != "ACTIVE" {
			continue
		}
		if after, err = guestRun(t, cc, id, initStart); err == nil && after != before {
			return
		}
	}
	t.Errorf("server %s: no new boot after a soft reboot (init started at %q, then %q)", id, before, after)
}

func guestTemplate(t *testing.T, tr *Tier, name, extra string) string {
	t.Helper()
	return guestTemplateIn(t, tr, name, SSHSecurityGroup, "", extra)
}

// guestTemplateIn is guestTemplate with the server in group and attrs
// added to the source.
func guestTemplateIn(t *testing.T, tr *Tier, name, group, attrs, extra string) string {
	t.Helper()
	return fmt.Sprintf(`
source "fatimage-openstack" "rc" {
  flavor              = "m1.small"
  networks            = [%q]
  source_image_name   = %q
  floating_ip_network = %q
  security_groups     = [%q]
  ssh_username        = "rocky"
  ssh_timeout         = "5m"
  instance_name       = %q
  image_name          = %q
  %s
}
build {
  sources = ["source.fatimage-openstack.rc"]
%s}
`, networkID(t, tr, TenantNetwork), GuestImageName, FloatingNetwork, group, name, name, attrs, extra)
}

// guestKeys are the keypair bootAndSSH imports, by server id.
var guestKeys = map[string]ssh.Signer{}

// bootAndSSH boots image as a new server with a new keypair, runs cmd on it
// over SSH at its fixed address (retrying while sshd is not up) and
// returns the server's id and the output; the server and keypair are
// deleted when the test ends.
func bootAndSSH(t *testing.T, tr *Tier, cc *gophercloud.ServiceClient, image, name, cmd string) (string, string) {
	t.Helper()
	ctx := context.Background()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sshPub, _ := ssh.NewPublicKey(pub)
	signer, _ := ssh.NewSignerFromKey(priv)
	if _, err := keypairs.Create(ctx, cc, keypairs.CreateOpts{Name: name, PublicKey: string(ssh.MarshalAuthorizedKey(sshPub))}).Extract(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { keypairs.Delete(ctx, cc, name, nil) })
	srv, err := servers.Create(ctx, cc, keypairs.CreateOptsExt{CreateOptsBuilder: servers.CreateOpts{
		Name: name, ImageRef: image, FlavorRef: "1",
		Networks:       []servers.Network{{UUID: networkID(t, tr, TenantNetwork)}},
		SecurityGroups: []string{SSHSecurityGroup},
	}, KeyName: name}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteServer(t, cc, srv.ID) })
	guestKeys[srv.ID] = signer
	if err := servers.WaitForStatus(ctxTimeout(t, 5*time.Minute), cc, srv.ID, "ACTIVE"); err != nil {
		t.Fatalf("server %s: %v", srv.ID, err)
	}
	var lastErr error
	for deadline := time.Now().Add(4 * time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
		out, err := guestRun(t, cc, srv.ID, cmd)
		if err == nil {
			return srv.ID, out
		}
		lastErr = err
	}
	t.Fatalf("no SSH on server %s: %v", srv.ID, lastErr)
	return "", ""
}

// guestRun runs cmd on the server over SSH at its fixed address; a
// command that fails fails the test.
func guestRun(t *testing.T, cc *gophercloud.ServiceClient, id, cmd string) (string, error) {
	t.Helper()
	s, err := servers.Get(context.Background(), cc, id).Extract()
	if err != nil {
		t.Fatal(err)
	}
	return guestRunAt(t, fixedAddress(s), id, cmd)
}

// guestRunAt runs cmd over SSH at ip on the server id (bootAndSSH's key).
func guestRunAt(t *testing.T, ip, id, cmd string) (string, error) {
	t.Helper()
	cfg := &ssh.ClientConfig{User: "rocky", Auth: []ssh.AuthMethod{ssh.PublicKeys(guestKeys[id])},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second}
	c, err := ssh.Dial("tcp", ip+":22", cfg)
	if err != nil {
		return "", err
	}
	defer c.Close()
	sess, err := c.NewSession()
	if err != nil {
		return "", err
	}
	out, err := sess.CombinedOutput(cmd)
	var exit *ssh.ExitError
	if errors.As(err, &exit) {
		t.Fatalf("%s on %s: %v\n%s", cmd, ip, err, out)
	}
	return string(out), err
}

func fixedAddress(s *servers.Server) string {
	for _, addrs := range s.Addresses {
		list, _ := addrs.([]any)
		for _, a := range list {
			m, _ := a.(map[string]any)
			if m["OS-EXT-IPS:type"] == "fixed" && m["version"] == float64(4) {
				return fmt.Sprint(m["addr"])
			}
		}
	}
	return ""
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// deleteServer deletes a server and waits until Nova no longer has it.
func deleteServer(t *testing.T, cc *gophercloud.ServiceClient, id string) {
	ctx := context.Background()
	if err := servers.Delete(ctx, cc, id).ExtractErr(); err != nil && !gophercloud.ResponseCodeIs(err, 404) {
		t.Errorf("deleting server %s: %v", id, err)
		return
	}
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		if _, err := servers.Get(ctx, cc, id).Extract(); gophercloud.ResponseCodeIs(err, 404) {
			return
		}
	}
	t.Errorf("server %s still there 3 minutes after its delete", id)
}

// A volume-backed SSH build of a real guest: real Cinder makes the boot
// volume from the guest image (its file holds the image's bytes), the
// guest boots from that file, a shell provisioner writes a file, and
// stopping the guest writes its disk back into the volume, as a real
// server's volume holds what it wrote; the server is deleted to free the
// volume, which os-volume_upload_image uploads into the image. The image
// boots as a new server with the file, and nothing is left.
func TestGuestVolumeBuild(t *testing.T) {
	tr := tier(t)
	clean(t, tr)
	name := uniqueName("rc-guestvol")
	marker := "volume-" + name
	r := mustBuild(t, tr, guestTemplateIn(t, tr, name, SSHSecurityGroup, guestVolume, fmt.Sprintf(`
  provisioner "shell" {
    inline = ["echo %s | sudo tee /etc/rc-marker"]
  }
`, marker)))
	mustContain(t, r.Output(), "Creating boot volume", "Connected to SSH!", "Uploading volume", "Deleting boot volume")
	ic := client(t, tr, false, openstack.NewImageV2)
	img := imageNamed(t, ic, name)
	if img.Status != images.ImageStatusActive || img.DiskFormat != "raw" {
		t.Fatalf("image %s: status %s, disk_format %s", img.ID, img.Status, img.DiskFormat)
	}
	cc := client(t, tr, false, openstack.NewComputeV2)
	if _, out := bootAndSSH(t, tr, cc, img.ID, name+"-boot", "cat /etc/rc-marker"); !strings.Contains(out, marker) {
		t.Errorf("the uploaded volume's image has no /etc/rc-marker from the build:\n%s", out)
	}
}
