package fatimage

import (
	"context"
	"fmt"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/packagesets"
)

// A built-in group may need a package's own setup command run once its
// packages are in (the appliance's eessi role runs `cvmfs_config
// setup`). That is the groups' run_after_packages: scripts shipped in the
// plugin (internal/packagesets/files, checked by shellcheck), never a
// template's shell, which stays outside this provisioner (Packer's shell
// provisioner runs that). Each runs as its own `sh -eu` (a subshell on
// the left of || would run with errexit off), so its first failing
// command fails the step.

// afterPackagesScript is the step's script: each script, headed by its
// name, in group order.
func afterPackagesScript(names []string) (*vmScript, error) {
	sc := newScript("after-packages")
	for _, n := range names {
		data, err := packagesets.Embedded(n)
		if err != nil {
			return nil, fmt.Errorf("run_after_packages: %w", err)
		}
		sc.call("after_packages_run", n, string(data))
	}
	return sc, nil
}

// stepAfterPackages runs the groups' run_after_packages scripts.
func stepAfterPackages(ctx context.Context, s *state) error {
	names := s.plan.sets.RunAfterPackages
	s.say("after the packages: " + strings.Join(names, ", "))
	sc, err := afterPackagesScript(names)
	if err != nil {
		return err
	}
	_, err = s.runScript(ctx, sc)
	return err
}
