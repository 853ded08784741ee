package fatimage

import (
	"context"
	"fmt"
	"slices"
)

// packagePlan is the package transaction of a run.
type packagePlan struct {
	Modules     []string // module streams enabled first
	Install     []string // packages installed in one transaction
	Remove      []string // packages removed when installed
	Exclude     []string // packages excluded from the install
	EnableRepos []string // repositories enabled for the transaction
	WeakDeps    bool     // dnf install_weak_deps
}

// packagePlan merges the groups' sets with the explicit options.
func (c *Config) packagePlan() packagePlan {
	p := packagePlan{
		Modules:     appendUnique(slices.Clone(c.groupSets().Modules), c.ModuleStreams...),
		Install:     appendUnique(slices.Clone(c.groupSets().Packages), c.Packages...),
		Remove:      appendUnique(slices.Clone(c.groupSets().Remove), c.RemovePackages...),
		Exclude:     c.Exclude,
		EnableRepos: slices.Clone(c.EnableRepos),
		WeakDeps:    c.InstallWeakDeps,
	}
	// a group's repos (grafana) are enabled for the install only when
	// configured: dnf fails on an unknown --enablerepo
	for _, r := range c.groupSets().EnableRepos {
		for _, cr := range c.repos {
			if cr.RepoName == r {
				p.EnableRepos = appendUnique(p.EnableRepos, r)
			}
		}
	}
	return p
}

func (p packagePlan) empty() bool { return len(p.Modules)+len(p.Install)+len(p.Remove) == 0 }

// script enables the module streams, installs in one transaction and
// removes the installed ones among Remove.
func (p packagePlan) script() *vmScript {
	sc := newScript("packages").setList("DNF_ENABLE", p.EnableRepos)
	if len(p.Modules) > 0 {
		sc.call("enable_modules", p.Modules...)
	}
	if len(p.Install) > 0 {
		args := append([]string{fmt.Sprint(p.WeakDeps), fmt.Sprint(len(p.Exclude))}, p.Exclude...)
		sc.call("install_packages", append(args, p.Install...)...)
	}
	if len(p.Remove) > 0 {
		sc.call("remove_packages", p.Remove...)
	}
	return sc
}

// stepPackages runs the package transaction.
func stepPackages(ctx context.Context, s *state) error {
	p := s.cfg.packagePlan()
	s.say(fmt.Sprintf("packages (%d module streams, %d to install, %d to remove)", len(p.Modules), len(p.Install), len(p.Remove)))
	_, err := s.runScript(ctx, p.script())
	return err
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
