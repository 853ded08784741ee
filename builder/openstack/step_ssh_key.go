package openstack

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/packer-plugin-sdk/communicator/sshkey"
	"github.com/hashicorp/packer-plugin-sdk/multistep"
	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
)

// StepSSHKey reads ssh_private_key_file or makes a temporary key pair for
// the build. The temporary key is ed25519 unless temporary_key_pair_type
// says otherwise: fast to make and accepted by every supported image. With
// WinRM and no winrm_password it is RSA (set by Prepare): Nova encrypts
// the Windows password with it.
type StepSSHKey struct{}

func (s *StepSSHKey) Run(ctx context.Context, state multistep.StateBag) multistep.StepAction {
	c := state.Get("config").(*Config)
	ui := state.Get("ui").(packersdk.Ui)
	comm := &c.Comm
	if comm.Type != "ssh" && !c.needsWinRMPassword() {
		return multistep.ActionContinue
	}
	if comm.SSHPrivateKeyFile != "" {
		priv, err := comm.ReadSSHPrivateKeyFile()
		if err != nil {
			return halt(state, fmt.Errorf("ssh_private_key_file: %w", err))
		}
		pub, err := sshkey.PublicKeyFromPrivate(priv)
		if err != nil {
			return halt(state, fmt.Errorf("ssh_private_key_file: %w", err))
		}
		comm.SSHPrivateKey, comm.SSHPublicKey = priv, pub
		ui.Say("Using the SSH private key of ssh_private_key_file")
		return multistep.ActionContinue
	}
	if comm.SSHAgentAuth || comm.SSHKeyPairName != "" || c.passwordLogin {
		return multistep.ActionContinue
	}
	kind := comm.SSHTemporaryKeyPairType
	if kind == "" {
		kind = sshkey.ED25519.String()
	}
	alg, err := sshkey.AlgorithmString(kind)
	if err != nil {
		return halt(state, fmt.Errorf("temporary_key_pair_type: %q is not one of dsa, ecdsa, ed25519, rsa", kind))
	}
	ui.Say(fmt.Sprintf("Creating a temporary %s SSH key...", strings.ToUpper(alg.String())))
	pair, err := sshkey.GeneratePair(alg, nil, comm.SSHTemporaryKeyPairBits)
	if err != nil {
		return halt(state, fmt.Errorf("creating a temporary SSH key: %w", err))
	}
	comm.SSHPrivateKey = pair.Private
	// The comment is what ssh_clear_authorized_keys looks for.
	comm.SSHPublicKey = append(bytes.TrimSpace(pair.Public), []byte(" "+comm.SSHTemporaryKeyPairName+"\n")...)
	return multistep.ActionContinue
}

func (s *StepSSHKey) Cleanup(multistep.StateBag) {}
