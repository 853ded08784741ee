package fatimage

import (
	"errors"
	"slices"

	"github.com/stackhpc/packer-plugin-fatimage/internal/packagesets"
)

// resolved is the union of the built-in sets of the groups asked for,
// with their users and binaries in the configuration's types.
type resolved struct {
	packagesets.Set
	users    []User
	binaries []Binary
	// packageUsers are the groups' users the site's appliance makes in
	// its plays for hosts in cluster or podman only: for a host in neither,
	// as in the appliance's build, the software's own install makes them
	// (grafana's package), after the packages.
	packageUsers []string
	// groups are the built-in groups, in order, for their content and
	// needed repositories.
	groups []packagesets.Group
	// applied are the groups' values from the site's appliance, each
	// with its variable (none with the built-in values).
	applied []packagesets.Applied
}

// resolveGroups merges the sets of the groups names stand for, as built
// on Rocky major (their per_major values; "": the data's, RL9), with
// their values from the site's appliance when av is given. A group's
// with_option set joins it when that option is true, its with_group set
// when that group is among the groups too.
func resolveGroups(names []string, options map[string]bool, av *applianceValues, major string) (*resolved, error) {
	all, err := packagesets.Resolve(names, options)
	if err != nil {
		return nil, err
	}
	for i := range all {
		if all[i], err = packagesets.ForMajor(all[i], major); err != nil {
			return nil, err
		}
	}
	var applied []packagesets.Applied
	if av != nil {
		var errs []error
		all, applied, errs = av.apply(all)
		if len(errs) > 0 {
			return nil, errors.Join(errs...)
		}
	} else if all, err = packagesets.WithoutAppliance(all); err != nil {
		return nil, err
	}
	r := &resolved{Set: packagesets.Merged(all), groups: all, applied: applied}
	for _, name := range r.Users {
		if av != nil && siteMakesUser(name) {
			r.packageUsers = append(r.packageUsers, name)
			continue // the appliance's local users say whether and how
		}
		u, ok := r.UserDefs[name] // as the site's variables name it
		if !ok {
			u, _ = packagesets.LookupUser(name)
		}
		r.users = append(r.users, User(u))
	}
	if av != nil && slices.Contains(av.groups, "cluster") { // bootstrap.yml adds them in its play for cluster
		users, err := av.localUsers()
		if err != nil {
			return nil, err
		}
		r.users = mergeUsers(r.users, users)
	}
	if av != nil && slices.Contains(av.groups, "podman") { // then its play for podman, the podman role
		users, err := av.podmanUsers()
		if err != nil {
			return nil, err
		}
		r.users = mergeUsers(r.users, users)
	}
	for _, name := range r.Binaries {
		if av == nil {
			r.binaries = append(r.binaries, builtinBinary(name))
			continue
		}
		b, a, err := av.binary(name)
		if err != nil {
			return nil, err
		}
		r.applied = append(r.applied, a...)
		r.binaries = append(r.binaries, b)
	}
	return r, nil
}

// siteMakesUser says whether the appliance decides whether and how user
// name is made: appliances_local_users (bootstrap.yml adds them in its
// play for cluster) and podman_users (its podman role, for a host in
// podman) stand for the built-in users they name.
func siteMakesUser(name string) bool {
	return slices.Contains(packagesets.ApplianceLocalUsers().Users, name) ||
		slices.Contains(packagesets.AppliancePodmanUsers().Users, name)
}

// builtinBinary is the built-in release tarball name, or only the name.
func builtinBinary(name string) Binary {
	b, _ := packagesets.LookupBinary(name)
	return Binary{Name: name, Version: b.Version, SHA256: b.SHA256, Files: b.Files}
}
