package openstack

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/hashicorp/packer-plugin-sdk/communicator"
	"github.com/hashicorp/packer-plugin-sdk/multistep"
	"github.com/hashicorp/packer-plugin-sdk/multistep/commonsteps"
	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
	"github.com/hashicorp/packer-plugin-sdk/packerbuilderdata"

	"github.com/stackhpc/packer-plugin-fatimage/internal/redact"
)

// BuilderID identifies this builder's artifacts.
const BuilderID = "stackhpc.fatimage.openstack"

// generatedDataNames are the `build.*` variables this builder sets.
var generatedDataNames = []string{"ImageID", "ImageName", "SourceImageID", "SourceImageName", "ServerID", "FloatingIP"}

var _ packersdk.Builder = (*Builder)(nil)

// Builder builds an image from an OpenStack server.
type Builder struct {
	config Config
	runner multistep.Runner
}

func (b *Builder) ConfigSpec() hcldec.ObjectSpec { return b.config.FlatMapstructure().HCL2Spec() }

func (b *Builder) Prepare(raws ...any) ([]string, []string, error) {
	warns, err := b.config.Prepare(raws...)
	if err != nil {
		return nil, warns, redact.Error(err)
	}
	return generatedDataNames, warns, nil
}

// steps is the build, in order; each step's Cleanup undoes its Run.
func (b *Builder) steps() []multistep.Step {
	c := &b.config
	steps := []multistep.Step{
		&StepAuthenticate{},
		&StepSweep{},
		&StepLoadFlavor{},
		&StepSSHKey{},
		&StepKeyPair{},
	}
	if c.PackerDebug && c.Comm.Type == "ssh" && c.Comm.SSHPrivateKeyFile == "" && !c.Comm.SSHAgentAuth {
		// -debug: let the user log in with the temporary key.
		steps = append(steps, &communicator.StepDumpSSHKey{
			Path: fmt.Sprintf("os_%s.pem", c.PackerBuildName),
			SSH:  &c.Comm.SSH,
		})
	}
	steps = append(steps,
		&StepSourceImage{},
		&StepDiscoverNetwork{},
		&StepCreateVolume{},
		&StepRunServer{},
		&StepGetPassword{},
		&StepFloatingIP{},
		&communicator.StepConnect{
			Config:    &c.Comm,
			Host:      bannerHost(c, commHost(c)),
			SSHConfig: c.Comm.SSHConfigFunc(),
			WinRMConfig: func(multistep.StateBag) (*communicator.WinRMConfig, error) {
				return &communicator.WinRMConfig{Username: c.Comm.WinRMUser, Password: c.Comm.WinRMPassword}, nil
			},
		},
		&commonsteps.StepProvision{},
		&commonsteps.StepCleanupTempKeys{Comm: &c.Comm},
		&StepStopServer{},
		&StepCreateImage{},
		&StepUpdateImage{},
	)
	return steps
}

// Run builds the image. Every line its steps show and the error it
// returns are redacted: Packer core's filter knows none of our secrets.
func (b *Builder) Run(ctx context.Context, ui packersdk.Ui, hook packersdk.Hook) (packersdk.Artifact, error) {
	ui = redact.UI(ui)
	state := new(multistep.BasicStateBag)
	state.Put("config", &b.config)
	state.Put("hook", hook)
	state.Put("ui", ui)
	state.Put("resources", newTracker())
	state.Put("communicator_config", &b.config.Comm)
	// Every generated name is declared even when a path (e.g. no floating
	// IP) leaves it empty, so templates can always refer to it.
	gd := &packerbuilderdata.GeneratedData{State: state}
	for _, n := range generatedDataNames {
		gd.Put(n, "")
	}

	b.runner = commonsteps.NewRunnerWithPauseFn(b.steps(), b.config.PackerConfig, ui, state)
	b.runner.Run(withProgress(ctx, ui.Say), state)
	artifact, err := b.finish(state, ui)
	return artifact, redact.Error(err)
}

// finish turns the final state into an artifact or an error, listing
// resources left behind (with -on-error=abort) so they can be found.
func (b *Builder) finish(state multistep.StateBag, ui packersdk.Ui) (packersdk.Artifact, error) {
	left := state.Get("resources").(*tracker).List()
	if len(left) > 0 {
		ui.Error(fmt.Sprintf("These resources of build %s were not deleted:\n  %s", b.config.buildID, strings.Join(left, "\n  ")))
	}
	if rawErr, ok := state.GetOk("error"); ok {
		return nil, rawErr.(error)
	}
	if _, ok := state.GetOk(multistep.StateCancelled); ok {
		return nil, errors.New("build was cancelled")
	}
	if _, ok := state.GetOk(multistep.StateHalted); ok {
		return nil, errors.New("build was halted")
	}
	if b.config.SkipCreateImage {
		ui.Say("skip_create_image is set: no image was created")
		return nil, nil
	}
	cl := state.Get("clients").(*clients)
	region := b.config.Region
	if region == "" {
		region = cl.region
	}
	return &Artifact{
		ImageID:         state.Get("image_id").(string),
		ImageName:       b.config.ImageName,
		Region:          region,
		SourceImageID:   getString(state, "source_image_id"),
		SourceImageName: getString(state, "source_image_name"),
		BuilderIDValue:  BuilderID,
		imageClient:     cl.image,
		StateData:       map[string]any{"generated_data": state.Get("generated_data")},
	}, nil
}
