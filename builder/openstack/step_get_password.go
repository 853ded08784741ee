package openstack

import (
	"context"
	"crypto/rsa"
	"fmt"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/hashicorp/packer-plugin-sdk/multistep"
	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
	"golang.org/x/crypto/ssh"
)

// StepGetPassword fetches the Windows administrator password for WinRM
// when winrm_password is not set, as the official builder does: the guest
// (cloudbase-init) posts it encrypted with the server's RSA keypair to the
// metadata service, Nova hands it out through os-server-password, and the
// build decrypts it with its private key. The wait is bounded by
// winrm_timeout and ends on Ctrl-C; the password is registered with the
// log secret filter and never printed, not even with -debug.
type StepGetPassword struct{}

func (s *StepGetPassword) Run(ctx context.Context, state multistep.StateBag) multistep.StepAction {
	c := state.Get("config").(*Config)
	if !c.needsWinRMPassword() {
		return multistep.ActionContinue
	}
	cl := state.Get("clients").(*clients)
	ui := state.Get("ui").(packersdk.Ui)
	serverID := state.Get("server_id").(string)

	raw, err := ssh.ParseRawPrivateKey(c.Comm.SSHPrivateKey)
	if err != nil {
		return halt(state, fmt.Errorf("winrm_password: not set, and the private key to decrypt Nova's copy cannot be read: %w", err))
	}
	key, ok := raw.(*rsa.PrivateKey)
	if !ok {
		return halt(state, fmt.Errorf("winrm_password: not set, and the key is %T, not RSA: Nova's password cannot be decrypted with it", raw))
	}
	ui.Say(fmt.Sprintf("Waiting for the administrator password of server %s (winrm_password is not set)...", serverID))
	var password string
	err = waitFor(ctx, fmt.Sprintf("server %s to post its administrator password", serverID), c.Comm.WinRMTimeout, func(ctx context.Context) (string, bool, error) {
		p, err := servers.GetPassword(ctx, cl.compute, serverID).ExtractPassword(key)
		if err != nil {
			return "", false, fmt.Errorf("getting the password of server %s: %w", serverID, err)
		}
		if p == "" {
			return "not posted yet", false, nil
		}
		password = p
		return "posted", true, nil
	})
	if err != nil {
		return halt(state, err)
	}
	packersdk.LogSecretFilter.Set(password)
	c.Comm.WinRMPassword = password
	ui.Say("Administrator password retrieved")
	return multistep.ActionContinue
}

func (s *StepGetPassword) Cleanup(multistep.StateBag) {}
