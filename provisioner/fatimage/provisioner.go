// Package fatimage is the `fatimage` provisioner: it swaps a Rocky Linux
// build VM to pinned repository snapshots, updates it, reboots when
// needed, installs package sets in one dnf transaction, creates users with
// fixed ids, uploads files, cleans up and disables the repositories again.
//
// Provision runs the steps of the table in steps.go, in order, over a
// state made fresh for each run.
package fatimage

import (
	"context"
	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"time"

	"github.com/hashicorp/hcl/v2/hcldec"
	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"

	"github.com/stackhpc/packer-plugin-fatimage/internal/redact"
)

// Provisioner implements packersdk.Provisioner. It holds the
// configuration and the plan Prepare made of it: what one run needs
// lives in a state.
type Provisioner struct {
	config Config
	plan   *plan
}

var _ packersdk.Provisioner = (*Provisioner)(nil)

// ConfigSpec implements packersdk.Provisioner.
func (p *Provisioner) ConfigSpec() hcldec.ObjectSpec { return p.config.FlatMapstructure().HCL2Spec() }

// Prepare implements packersdk.Provisioner.
func (p *Provisioner) Prepare(raws ...any) error {
	pl, err := p.config.prepare(raws...)
	p.plan = pl
	if err != nil {
		return err
	}
	// Packer core's filter knows none of a plugin's secrets: redact does
	// the filtering, for the Ui and the log alike.
	redact.AddBasic(pl.repoUsername, pl.repoPassword)
	for _, r := range p.config.ContainerRegistries {
		redact.AddBasic(r.Username, r.Password)
	}
	redact.Add(pl.repoOptionSecrets()...)
	return nil
}

// Provision implements packersdk.Provisioner. What it shows and the error
// it returns are redacted.
func (p *Provisioner) Provision(ctx context.Context, ui packersdk.Ui, comm packersdk.Communicator, generated map[string]any) error {
	return redact.Error(runSteps(ctx, steps, &state{cfg: &p.config, plan: p.plan, replan: p.config.plan, ui: redact.UI(ui), comm: comm, started: time.Now().UTC(), generated: generated}))
}

// state is one Provision run: what its steps share and count.
type state struct {
	cfg  *Config // the options as written (defaulted)
	plan *plan   // what Prepare resolved: repos, groups, users, content
	// replan makes the plan anew with the groups' values from the site's
	// appliance (Config.plan; the step appliance, first) or for the
	// build VM's Rocky major (the step connect, when the plan could only
	// assume it).
	replan func(av *applianceValues, vmMajor string) (*plan, error)
	ui     packersdk.Ui
	comm   packersdk.Communicator

	started   time.Time
	step      string // the running step: names its scripts and errors
	workDir   string // the run's private directory on the VM
	loginUser string // the user SSH logs in as
	seq       int    // numbers the scripts and bundles in workDir

	dnfRuns int // dnf commands run so far
	reboots int // reboots done so far
	// pending are the reasons for a reboot not done yet (a new kernel or
	// core library, the SELinux mode); rebooted are those of the reboots
	// done. image.json records both.
	pending  []string
	rebooted []string
	took     []string // "<step> <duration>" of each step done, for the summary

	content contentState // what the content fetch learnt (git commits)
	// appliance is what the site's fatimage.yml runs for the build host
	// (step_appliance.go); nil without appliance_environment.
	appliance *applianceRun
	// applianceRes is the appliance step's one resolution of the site's
	// variables and of what fatimage.yml runs for the build host.
	applianceRes *appliance.Result
	// applianceAll are the steps of the site's fatimage.yml the resolution
	// decided, and applianceTarget the build VM it reached.
	applianceAll    []appliance.Step
	applianceTarget appliance.Target
	// generated is the builder's data (SourceImageName, ImageName) and
	// manifest what image-json recorded: the SBOM's sources.
	generated map[string]any
	manifest  *manifest
}

// say shows a step's headline.
func (s *state) say(msg string) { s.ui.Say("fatimage: " + msg) }
