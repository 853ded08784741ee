package openstack

import (
	"context"
	"fmt"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/hashicorp/packer-plugin-sdk/multistep"
	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
)

// StepKeyPair uploads the temporary public key as a Nova keypair named
// after the build, or uses ssh_keypair_name.
type StepKeyPair struct {
	created string
}

func (s *StepKeyPair) Run(ctx context.Context, state multistep.StateBag) multistep.StepAction {
	c := state.Get("config").(*Config)
	ui := state.Get("ui").(packersdk.Ui)
	comm := &c.Comm
	switch {
	case comm.Type != "ssh" && !c.needsWinRMPassword():
		return multistep.ActionContinue
	case comm.SSHKeyPairName != "":
		ui.Say(fmt.Sprintf("Using the existing keypair %s", comm.SSHKeyPairName))
		state.Put("keypair_name", comm.SSHKeyPairName)
		return multistep.ActionContinue
	case comm.SSHPrivateKeyFile != "" || comm.SSHAgentAuth || len(comm.SSHPublicKey) == 0:
		// The image or user_data must already trust the key, as with the
		// official builder.
		return multistep.ActionContinue
	}
	cl := state.Get("clients").(*clients)
	name := comm.SSHTemporaryKeyPairName
	ui.Say(fmt.Sprintf("Creating the temporary keypair %s...", name))
	pub := strings.TrimSpace(string(comm.SSHPublicKey))
	kp, err := createOrAdopt(ctx, ui, "creating keypair "+name, func(ctx context.Context) (*keypairs.KeyPair, error) {
		return keypairs.Create(ctx, cl.compute, keypairs.CreateOpts{Name: name, PublicKey: pub}).Extract()
	}, func(ctx context.Context) (*keypairs.KeyPair, bool, error) {
		return findKeyPair(ctx, cl, name, pub)
	})
	if err != nil {
		return halt(state, err)
	}
	s.created = kp.Name
	trackerOf(state).Add("keypair", kp.Name, "temporary SSH key")
	state.Put("keypair_name", kp.Name)
	return multistep.ActionContinue
}

// findKeyPair finds the keypair a lost create made: name with our key.
// The same name with another key is someone else's.
func findKeyPair(ctx context.Context, cl *clients, name, pub string) (*keypairs.KeyPair, bool, error) {
	kp, err := keypairs.Get(ctx, cl.compute, name, nil).Extract()
	switch {
	case isNotFound(err):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	case strings.TrimSpace(kp.PublicKey) != pub:
		return nil, false, nil
	}
	return kp, true, nil
}

func (s *StepKeyPair) Cleanup(state multistep.StateBag) {
	if s.created == "" {
		return
	}
	c := state.Get("config").(*Config)
	cl := state.Get("clients").(*clients)
	ui := state.Get("ui").(packersdk.Ui)
	ctx, cancel := cleanupContext(c)
	defer cancel()
	ui.Say(fmt.Sprintf("Deleting the temporary keypair %s...", s.created))
	err := keypairs.Delete(ctx, cl.compute, s.created, nil).ExtractErr()
	if err != nil && !isNotFound(err) {
		ui.Error(fmt.Sprintf("Error deleting keypair %s: %s; delete it by hand", s.created, err))
		return
	}
	trackerOf(state).Done("keypair", s.created)
	s.created = ""
}
