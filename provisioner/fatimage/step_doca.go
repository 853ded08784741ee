package fatimage

import (
	"context"
)

// docaProfile is the DOCA package set the appliance's doca role installs
// after the kernel support (its doca_profile default).
const docaProfile = "doca-ofed"

// stepDOCA does what the appliance's doca role does after doca-extra:
// doca-kernel-support builds the kernel packages for the running kernel
// (so the step needs it: a pending reboot comes first), its repository
// RPM is installed, then the profile in one dnf process of its own (the
// profile's packages come from that repository, which dnf reads only
// when the process starts: an extra build with doca pays one dnf process
// more), and the initramfs is rebuilt. The appliance's openibd restart
// only loads the modules into the build VM's kernel: not done. The
// transaction may have installed epel-release (a build from a base
// image), whose epel.repo names public mirrors: the profile's dnf
// process reads the build's repositories only, as the transaction's did.
func stepDOCA(ctx context.Context, s *state) error {
	s.say("doca: doca-kernel-support for the running kernel, then " + docaProfile)
	sc := s.restripRepoFiles().add(newScript("doca").call("doca_kernel_support"))
	if _, err := s.runScript(ctx, sc); err != nil {
		return err
	}
	base := s.plan.packagePlan()
	p := packagePlan{Install: []string{docaProfile}, EnableRepos: base.EnableRepos, Exclude: base.Exclude, WeakDeps: base.WeakDeps}
	if err := s.runPlan(ctx, p); err != nil {
		return err
	}
	_, err := s.runScript(ctx, newScript("doca").call("doca_finish"))
	return err
}
