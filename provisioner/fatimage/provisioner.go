// Package fatimage is the `fatimage` provisioner: it swaps a Rocky Linux
// build VM to pinned repository snapshots, updates it, reboots when
// needed, installs package sets in one dnf transaction, creates users with
// fixed ids, uploads files, cleans up and disables the repositories again.
package fatimage

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2/hcldec"
	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
)

// Provisioner implements packersdk.Provisioner.
type Provisioner struct {
	config Config

	// state of one Provision run
	ui        packersdk.Ui
	comm      packersdk.Communicator
	workDir   string
	loginUser string
	dnfRuns   int
	reboots   int
	seq       int
	content   contentState
}

var _ packersdk.Provisioner = (*Provisioner)(nil)

// ConfigSpec implements packersdk.Provisioner.
func (p *Provisioner) ConfigSpec() hcldec.ObjectSpec { return p.config.FlatMapstructure().HCL2Spec() }

// Prepare implements packersdk.Provisioner.
func (p *Provisioner) Prepare(raws ...any) error {
	if err := p.config.Prepare(raws...); err != nil {
		return err
	}
	if p.config.RepoPassword != "" {
		packersdk.LogSecretFilter.Set(p.config.RepoPassword)
	}
	return nil
}

// Provision implements packersdk.Provisioner.
func (p *Provisioner) Provision(ctx context.Context, ui packersdk.Ui, comm packersdk.Communicator, _ map[string]any) error {
	p.ui, p.comm, p.dnfRuns, p.reboots = ui, comm, 0, 0
	c := &p.config
	started := time.Now().UTC()

	sets := c.sets
	modules := appendUnique(slices.Clone(sets.Modules), c.ModuleStreams...)
	install := appendUnique(slices.Clone(sets.Packages), c.Packages...)
	remove := appendUnique(slices.Clone(sets.Remove), c.RemovePackages...)
	plugins := appendUnique(slices.Clone(sets.GrafanaPlugins), c.GrafanaPlugins...)
	services := appendUnique(slices.Clone(sets.Services), c.DisableServices...)
	// a group's repos (grafana) are enabled for the install only when
	// configured: dnf fails on an unknown --enablerepo
	installRepos := slices.Clone(c.EnableRepos)
	for _, r := range sets.EnableRepos {
		for _, cr := range c.repos {
			if cr.RepoName == r {
				installRepos = appendUnique(installRepos, r)
			}
		}
	}

	out, err := p.runPlain(ctx, "id -un")
	if err != nil {
		return fmt.Errorf("finding the login user: %w", err)
	}
	p.loginUser = strings.TrimSpace(out)
	if err := p.makeWorkDir(ctx); err != nil {
		return err
	}

	ui.Say("fatimage: repositories")
	for _, r := range c.repos {
		if r.Warning != "" {
			ui.Say(fmt.Sprintf("fatimage: WARNING: repository %s: %s", r.Name, r.Warning))
		}
	}
	for _, w := range c.contentWarnings() {
		ui.Say("fatimage: WARNING: " + w)
	}
	if err := p.stepRepos(ctx); err != nil {
		return err
	}
	// Binaries are fetched and verified before any package work, so a
	// bad checksum fails the build in seconds, not after the update.
	if len(c.binaries) > 0 {
		ui.Say(fmt.Sprintf("fatimage: fetching %d binaries (binary_source = %s)", len(c.binaries), c.BinarySource))
		if err := p.stepFetchBinaries(ctx); err != nil {
			return err
		}
	}

	// so is every other URL-based content (git checkouts, downloads)
	if err := p.stepFetchContent(ctx); err != nil {
		return err
	}

	rebootNeeded := false
	if c.SELinux != "unchanged" {
		ui.Say("fatimage: SELinux " + c.SELinux)
		out, err := p.runScript(ctx, "selinux", scriptSELinux(c.SELinux))
		if err != nil {
			return err
		}
		rebootNeeded = rebootNeeded || strings.Contains(out, "REBOOT-NEEDED")
	}
	if *c.Update {
		ui.Say("fatimage: dnf update")
		out, err := p.runScript(ctx, "update", scriptUpdate(c.UpdateExclude, c.EnableRepos))
		if err != nil {
			return err
		}
		rebootNeeded = rebootNeeded || strings.Contains(out, "REBOOT-NEEDED")
	}
	if c.Reboot == "always" || (c.Reboot == "auto" && rebootNeeded) {
		ui.Say("fatimage: reboot")
		if err := p.reboot(ctx); err != nil {
			return err
		}
	} else if rebootNeeded {
		ui.Say("fatimage: a reboot is needed but reboot = \"never\"")
	}

	if *c.MoveLoginHome {
		home := c.LoginHome
		if home == "" {
			home = "/var/lib/" + p.loginUser
		}
		ui.Say("fatimage: login user's home")
		if _, err := p.runScript(ctx, "login-home", scriptLoginHome(home)); err != nil {
			return err
		}
	}
	if len(c.users) > 0 {
		ui.Say("fatimage: users")
		if _, err := p.runScript(ctx, "users", scriptUsers(c.users)); err != nil {
			return err
		}
	}
	if len(modules)+len(install)+len(remove) > 0 {
		ui.Say(fmt.Sprintf("fatimage: packages (%d module streams, %d to install, %d to remove)", len(modules), len(install), len(remove)))
		s, _ := scriptPackages(modules, install, remove, c.Exclude, installRepos, c.InstallWeakDeps)
		if _, err := p.runScript(ctx, "packages", s); err != nil {
			return err
		}
	}
	if len(plugins) > 0 {
		ui.Say("fatimage: grafana plugins")
		if _, err := p.runScript(ctx, "grafana-plugins", scriptGrafanaPlugins(plugins)); err != nil {
			return err
		}
	}
	if len(services) > 0 {
		ui.Say("fatimage: services left stopped and disabled")
		if _, err := p.runScript(ctx, "services", scriptDisableServices(services)); err != nil {
			return err
		}
	}
	if len(c.binaries) > 0 {
		ui.Say("fatimage: installing binaries")
		if _, err := p.runScript(ctx, "binaries", scriptInstallBinaries(c.binaries, p.workDir)); err != nil {
			return err
		}
	}
	if c.hasContent() {
		ui.Say("fatimage: content (git checkouts, downloads)")
		if err := p.stepInstallContent(ctx); err != nil {
			return err
		}
	}
	if c.hasSystem() {
		ui.Say("fatimage: system settings")
		if err := p.stepSystem(ctx); err != nil {
			return err
		}
	}
	if len(c.Files) > 0 {
		ui.Say("fatimage: files")
		if err := p.stepFiles(ctx); err != nil {
			return err
		}
	}
	if *c.Cleanup {
		ui.Say("fatimage: cleanup")
		if s := scriptCleanup(c.SkipCleanupSteps, false); s != "" {
			if _, err := p.runScript(ctx, "cleanup", s); err != nil {
				return err
			}
		}
	}
	if *c.DisableRepos {
		ui.Say("fatimage: disabling repositories")
		if err := p.stepDisableRepos(ctx); err != nil {
			return err
		}
	} else if w := c.credentialsLeftWarning(); w != "" {
		ui.Say(w)
	}
	ui.Say("fatimage: image.json")
	if err := p.stepImageJSON(ctx, started); err != nil {
		return err
	}
	ui.Say(fmt.Sprintf("fatimage: done: %d dnf command(s), %d reboot(s)", p.dnfRuns, p.reboots))
	// Last: remove the work dir and, if asked, the keys SSH needs.
	final := ""
	if *c.Cleanup {
		final = scriptCleanup(c.SkipCleanupSteps, true)
	}
	if _, err := p.runScript(ctx, "final", final+scriptUnlinkOldHome+"rm -rf \"$FATIMAGE_WORKDIR\"\n"); err != nil {
		return err
	}
	return nil
}

// DNFRuns is how many dnf commands the last Provision ran; Reboots how
// many reboots it did.
func (p *Provisioner) DNFRuns() int { return p.dnfRuns }
func (p *Provisioner) Reboots() int { return p.reboots }

func appendUnique(l []string, add ...string) []string {
	seen := map[string]bool{}
	for _, s := range l {
		seen[s] = true
	}
	for _, s := range add {
		if !seen[s] {
			seen[s] = true
			l = append(l, s)
		}
	}
	return l
}
