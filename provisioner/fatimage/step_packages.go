package fatimage

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content/rpms"
)

// packagePlan is the package transaction of a run.
type packagePlan struct {
	Modules []string // module streams enabled first
	Update  bool     // update every installed package
	Install []string // packages installed in one transaction
	// NoWeakDeps are installed first, with weak dependencies off, in the
	// same dnf process (the groups' no_weak_deps: the Slurm set)
	NoWeakDeps []string
	// NoGPGCheck are configured repositories whose packages are
	// installed without GPG check (the groups' no_gpgcheck_repos)
	NoGPGCheck []string
	Remove     []string // packages removed when installed
	Exclude    []string // packages excluded from the install
	KeepAsIs   []string // installed packages the update leaves alone
	// Present are the specs of Install and NoWeakDeps that stay at the
	// installed version when they name a package the VM already has (no
	// update only; presentSpec says which)
	Present     []string
	EnableRepos []string // repositories enabled for the transaction
	WeakDeps    bool     // dnf install_weak_deps
	// fileNames are the names of the packages Install holds as files
	// (rpm_urls), for needsRunningKernel.
	fileNames []string
}

// packagePlan merges the groups' sets with the explicit options.
func (pl *plan) packagePlan() packagePlan {
	c := pl.cfg
	p := packagePlan{
		Modules:     appendUnique(slices.Clone(pl.sets.Modules), c.ModuleStreams...),
		Update:      pl.update,
		Install:     appendUnique(slices.Clone(pl.sets.Packages), c.Packages...),
		Remove:      appendUnique(slices.Clone(pl.sets.Remove), c.RemovePackages...),
		Exclude:     c.Exclude,
		KeepAsIs:    c.UpdateExclude,
		EnableRepos: slices.Clone(c.EnableRepos),
		WeakDeps:    c.InstallWeakDeps == nil || *c.InstallWeakDeps,
	}
	for _, r := range pl.sets.NoGPGCheckRepos {
		if slices.Contains(enabledRepoIDs(pl.repos), r) {
			p.NoGPGCheck = appendUnique(p.NoGPGCheck, r)
		}
	}
	// a package both lists name is installed with the Slurm set
	p.NoWeakDeps = slices.Clone(pl.sets.NoWeakDeps)
	p.Install = slices.DeleteFunc(p.Install, func(n string) bool { return slices.Contains(p.NoWeakDeps, n) })
	// the appliance installs with dnf's `state: present`, which leaves an
	// installed package at its version, where `dnf install` takes it to
	// the snapshot's newest (a group's latest: `state: latest`); with the
	// update, everything goes there anyway
	if !p.Update {
		for _, n := range slices.Concat(p.NoWeakDeps, p.Install) {
			if presentSpec(n) && !slices.Contains(pl.sets.Latest, n) {
				p.Present = append(p.Present, n)
			}
		}
	}
	// a group's repos (grafana) are enabled for the install only when
	// configured: dnf fails on an unknown --enablerepo
	for _, r := range pl.sets.EnableRepos {
		for _, cr := range pl.repos {
			if cr.RepoName == r {
				p.EnableRepos = appendUnique(p.EnableRepos, r)
			}
		}
	}
	return p
}

// transaction is the run's transaction: the configured plan with the RPMs by URL
// staged in the work dir, installed as files in the same transaction.
func (s *state) transaction() packagePlan {
	p := s.plan.packagePlan()
	for i := range s.plan.RPMURLs {
		p.Install = append(p.Install, rpms.Staged(s.workDir, i))
	}
	// (none before rpm-urls-fetch ran)
	fetched, _ := rpms.ParseFetched(s.content.fetched[kindRPMs.option()], len(s.plan.RPMURLs))
	for _, r := range fetched {
		p.fileNames = append(p.fileNames, r.Name)
	}
	return p
}

// presentSpec reports whether spec is one the VM's rpm decides is
// already present (rpm -q: an installed package's name, name.arch or
// name-version, what Ansible's dnf module checks for `state: present`):
// not a glob, a file path or local RPM file, a URL, an @group or
// @module, or a placeholder of a version. A provide (python3dist(x))
// names no package, so rpm sends it to the install, as Ansible does.
func presentSpec(spec string) bool {
	if m := perMajorSpec.FindStringIndex(spec); m != nil {
		spec = spec[m[1]:]
	}
	return spec != "" && !strings.ContainsAny(spec, "*?[{ /@") && !strings.HasSuffix(spec, ".rpm")
}

// perMajorSpec is a spec's "el<N>:" prefix (only on that major).
var perMajorSpec = regexp.MustCompile(`^el[0-9]+:`)

func (p packagePlan) empty() bool {
	return !p.Update && len(p.Modules)+len(p.Install)+len(p.NoWeakDeps)+len(p.Remove) == 0
}

// runningKernelPatterns are the packages whose install builds or loads
// code for the running kernel (DKMS and kmod builds, the kernel-devel
// they compile against, OFED/DOCA/CUDA drivers): they must not be
// installed before the VM runs the kernel the image boots.
var runningKernelPatterns = []string{
	"kernel-devel*", "kernel-headers", "dkms", "*-dkms", "kmod-*", "akmod*",
	"cuda*", "nvidia-driver*", "mlnx-ofed*", "mlnx-ofa_kernel*", "ofed*", "doca-*",
}

// needsRunningKernel reports whether p installs a package of
// runningKernelPatterns (a module stream's name counts too).
func (p packagePlan) needsRunningKernel() bool {
	for _, n := range slices.Concat(p.Install, p.NoWeakDeps, p.Modules, p.fileNames) {
		name, _, _ := strings.Cut(n, ":")
		for _, pat := range runningKernelPatterns {
			if ok, _ := path.Match(pat, name); ok {
				return true
			}
		}
	}
	return false
}

// split is the plan as done when its packages need the running kernel:
// the update alone first, then (after the reboot that brings the new
// kernel up) the rest.
func (p packagePlan) split() (update, rest packagePlan) {
	update = packagePlan{Update: p.Update, KeepAsIs: p.KeepAsIs, EnableRepos: p.EnableRepos, WeakDeps: p.WeakDeps, NoGPGCheck: p.NoGPGCheck}
	rest = p
	rest.Update = false
	return update, rest
}

// script enables the module streams, runs the one transaction and checks
// whether it left a reboot pending.
func (p packagePlan) script() *vmScript {
	sc := newScript("transaction").setList("DNF_ENABLE", p.EnableRepos)
	if len(p.Modules) > 0 {
		sc.call("enable_modules", p.Modules...)
	}
	if p.Update || len(p.Install)+len(p.NoWeakDeps)+len(p.Remove) > 0 {
		sc.set("TX_UPDATE", fmt.Sprint(p.Update)).set("TX_WEAK_DEPS", fmt.Sprint(p.WeakDeps)).
			setList("TX_UPDATE_EXCLUDE", p.KeepAsIs).setList("TX_EXCLUDE", p.Exclude).
			setList("TX_INSTALL", p.Install).setList("TX_PRESENT", p.Present).setList("TX_INSTALL_NO_WEAK", p.NoWeakDeps).setList("TX_NO_GPGCHECK", p.NoGPGCheck).setList("TX_REMOVE", p.Remove).
			call("run_transaction")
	}
	return sc.call("reboot_check")
}

// headline says what a transaction does.
func (p packagePlan) headline() string {
	what := fmt.Sprintf("%d to install, %d to remove", len(p.Install)+len(p.NoWeakDeps), len(p.Remove))
	if len(p.NoWeakDeps) > 0 {
		what = fmt.Sprintf("%d to install (%d without weak dependencies), %d to remove", len(p.Install)+len(p.NoWeakDeps), len(p.NoWeakDeps), len(p.Remove))
	}
	if p.Update {
		what = "update, " + what
	}
	if len(p.Modules) > 0 {
		what = fmt.Sprintf("%d module streams, %s", len(p.Modules), what)
	}
	if len(p.NoWeakDeps) > 0 {
		return what + " in one dnf process (two transactions)"
	}
	return what + " in one transaction"
}

// runPlan runs a transaction and records the reboot it leaves pending.
func (s *state) runPlan(ctx context.Context, p packagePlan) error {
	s.say("packages: " + p.headline())
	for _, r := range p.NoGPGCheck {
		s.say("WARNING: repository " + r + ": its packages are installed without GPG check, as the appliance installs them (unsigned upstream)")
	}
	sc := p.script()
	s.plan.buildRepoSecrets(sc, s.workDir)
	out, err := s.runScript(ctx, sc)
	for _, l := range strings.Split(out, "\n") {
		if r, ok := strings.CutPrefix(strings.TrimSpace(l), "REBOOT-PENDING: "); ok {
			s.pending = appendUnique(s.pending, r)
		}
	}
	return err
}

// kernelPackagesLater reports whether the packages wait for the running
// kernel (the packages step after the reboot).
func kernelPackagesLater(s *state) bool {
	p := s.transaction()
	return p.Update && p.needsRunningKernel()
}

// stepTransaction updates, installs and removes in one transaction, or
// only updates when the packages need the running kernel.
func stepTransaction(ctx context.Context, s *state) error {
	p := s.transaction()
	if kernelPackagesLater(s) {
		p, _ = p.split()
	}
	return s.runPlan(ctx, p)
}

// stepKernelPackages installs the packages that need the running kernel,
// after the reboot the table forces before it.
func stepKernelPackages(ctx context.Context, s *state) error {
	_, rest := s.transaction().split()
	return s.runPlan(ctx, rest)
}

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
