package fatimage

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content/containers"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/files"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/lines"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/rpms"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/system"
)

// step is one named stage of a run. Adding a step means one entry in
// steps and one step_<name>.go file holding its functions; a step that
// runs a script on the VM has its script in scripts/<name>.sh (see
// docs/development.md, "Adding a provisioner step").
type step struct {
	// name is the step's name in errors and in the names of its scripts
	// on the VM (NN-<name>.sh in the work dir).
	name string
	// when reports whether the step has anything to do in this run; nil
	// means always.
	when func(*state) bool
	// run does the step; it says its own headline (s.say).
	run func(context.Context, *state) error
	// needsKernel: the step builds or loads code for the running kernel
	// (DKMS, kmods, kernel-devel, OFED/DOCA/CUDA drivers). With reboot =
	// "auto", a reboot still pending is done before it; no other step
	// reboots, so a build without such steps snapshots unrebooted and the
	// image boots its new kernel on first boot.
	needsKernel bool
	// kinds are the content kinds the step fetches or installs
	// (kindStep, kindsStep, fetchStep, the content steps); their items
	// are checked and merged with the groups' at Prepare.
	kinds []contentKind
}

// steps is a run, in order.
var steps = []step{
	// First: the plan every later step reads is made from the site's
	// appliance here (or the built-in values are said to be used).
	{name: "appliance", when: func(s *state) bool { return s.plan.site != nil || len(s.plan.sets.groups) > 0 }, run: stepAppliance},
	{name: "connect", run: stepConnect},
	// With the site's appliance: what its fatimage.yml runs for the build
	// host, and what of it is not native runs through Ansible at the
	// three points below (appliance_native.go).
	{name: "appliance-steps", when: func(s *state) bool { return s.plan.site != nil }, run: stepApplianceSteps},
	{name: "ansible-pre", when: ansibleAt(phasePre), run: ansiblePhase(phasePre)},
	// The repositories and their keys (the gpg_keys kind, kindKeys).
	{name: "repos", kinds: registered(kindKeys), run: stepRepos},
	// Binaries are fetched and verified before any package work, so a
	// bad checksum fails the build in seconds, not after the update.
	{name: "binaries-fetch", when: hasBinaries, run: stepFetchBinaries},
	// So is every other URL-based content (git checkouts, downloads,
	// python packages): a bad pin or checksum changes nothing.
	{name: "content-fetch", when: func(s *state) bool { return s.plan.hasContent() }, run: stepFetchContent},
	fetchStep("rpm-urls-fetch", kindRPMs),
	{name: "grafana-plugins-fetch", when: hasGrafanaPins, run: stepFetchGrafanaPlugins},
	// Container images: digests resolved and checked (host: fetched).
	fetchStep("containers-fetch", kindContainers),
	{name: "selinux", when: changesSELinux, run: stepSELinux},
	{name: "login-home", when: func(s *state) bool { return s.plan.moveLoginHome }, run: stepLoginHome},
	// Users before packages: their fixed UIDs must exist before a
	// package's scriptlet creates the same user with another.
	{name: "users", when: func(s *state) bool { return len(s.plan.users) > 0 }, run: stepUsers},
	// The update, installs and removals: one dnf transaction (the update
	// alone when the packages need the running kernel: they follow the
	// reboot, in "kernel-packages").
	{name: "packages", when: func(s *state) bool { return !s.transaction().empty() }, run: stepTransaction},
	{name: "reboot", run: stepReboot},
	{name: "kernel-packages", when: kernelPackagesLater, needsKernel: true, run: stepKernelPackages},
	// the groups' setup commands of their packages (cvmfs_config setup)
	{name: "after-packages", when: func(s *state) bool { return len(s.plan.sets.RunAfterPackages) > 0 }, run: stepAfterPackages},
	// doca-kernel-support builds for the running kernel, after the
	// packages that brought doca-extra and its kernel-devel.
	{name: "doca", when: func(s *state) bool { return s.plan.hasBuiltin("doca") }, needsKernel: true, run: stepDOCA},
	{name: "ansible-bootstrap", when: ansibleAt(phaseBootstrap), run: ansiblePhase(phaseBootstrap)},
	{name: "grafana-plugins", when: func(s *state) bool { return len(s.plan.grafanaPlugins()) > 0 }, run: stepGrafanaPlugins},
	{name: "services", when: func(s *state) bool { return len(s.plan.disabledServices()) > 0 }, run: stepServices},
	{name: "binaries", when: hasBinaries, run: stepInstallBinaries},
	// The content kinds fetched in content-fetch (in this order) and
	// installed here, with the older kinds of content.go.
	{name: "content", kinds: registered(contentStepKinds...), when: func(s *state) bool { return s.plan.hasContent() }, run: stepInstallContent},
	// After users and packages: the user and podman exist.
	installStep("containers", kindContainers),
	kindsStep("system", "system settings",
		newKind(system.Units{}, func(o *ContentOptions) *[]system.SystemdUnit { return &o.SystemdUnits }),
		newKind(system.Sysctls{}, func(o *ContentOptions) *[]system.Sysctl { return &o.Sysctls }),
		newKind(system.Modprobe{}, func(o *ContentOptions) *[]system.ModprobeBlacklist { return &o.ModprobeBlacklists }),
		newKind(system.Tmpfiles, func(o *ContentOptions) *[]system.ConfigFile { return &o.Tmpfiles }),
		newKind(system.Limits, func(o *ContentOptions) *[]system.ConfigFile { return &o.Limits }),
		newKind(system.KernelArgs{}, func(o *ContentOptions) *[]string { return &o.KernelArgs })),
	kindStep("files", newKind(files.Kind{}, func(o *ContentOptions) *[]files.File { return &o.Files })),
	// After packages and files: the lines edited are in their files.
	kindStep("line-edits", newKind(lines.Kind{}, func(o *ContentOptions) *[]lines.LineEdit { return &o.LineEdits })),
	{name: "ansible-install", when: ansibleAt(phaseInstall), run: ansiblePhase(phaseInstall)},
	{name: "cleanup", when: func(s *state) bool { return *s.cfg.Cleanup }, run: stepCleanup},
	{name: "disable-repos", run: stepDisableRepos},
	{name: "image-json", run: stepImageJSON},
	// After image-json: the SBOM starts from its record.
	{name: "sbom", when: wantsSBOM, run: stepSBOM},
	// Last: remove the work dir and, if asked, the keys SSH needs.
	{name: "final", run: stepFinal},
}

// The kinds fetched in a step of their own (fetchStep), before any
// package work, and installed by another step later.
var (
	// kindRPMs is installed by the packages step's transaction.
	kindRPMs = newKind(rpms.Kind{}, func(o *ContentOptions) *[]rpms.RPMURL { return &o.RPMURLs })
	// kindContainers is installed by its installStep, after the
	// packages and users.
	kindContainers = newKind(containers.Kind{}, func(o *ContentOptions) *[]containers.Container { return &o.Containers })
)

// runSteps runs the steps that apply, in order, until one fails.
func runSteps(ctx context.Context, table []step, s *state) error {
	for _, st := range table {
		if st.when != nil && !st.when(s) {
			continue
		}
		s.step = st.name
		start := time.Now()
		if st.needsKernel && s.cfg.Reboot == "auto" && len(s.pending) > 0 {
			s.say(fmt.Sprintf("reboot: step %s needs the running kernel (%s)", st.name, strings.Join(s.pending, "; ")))
			if err := s.reboot(ctx); err != nil {
				return err
			}
		}
		if err := st.run(ctx, s); err != nil {
			return err
		}
		s.took = append(s.took, fmt.Sprintf("%s %s", st.name, time.Since(start).Round(100*time.Millisecond)))
	}
	return nil
}

func hasBinaries(s *state) bool { return len(s.plan.binaries) > 0 }
