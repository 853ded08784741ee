package fatimage

import "github.com/stackhpc/packer-plugin-fatimage/internal/packagesets"

// resolved is the union of the built-in sets of the groups asked for,
// with their users and binaries in the configuration's types.
type resolved struct {
	packagesets.Set
	users    []User
	binaries []Binary
	// groups are the built-in groups, in order, for their content and
	// needed repositories.
	groups []packagesets.Group
}

// resolveGroups merges the sets of the groups names stand for.
// A group's with_option set joins it when that option is true, its
// with_group set when that group is among the groups too.
func resolveGroups(names []string, options map[string]bool) (*resolved, error) {
	all, err := packagesets.Resolve(names, options)
	if err != nil {
		return nil, err
	}
	r := &resolved{Set: packagesets.Merged(all), groups: all}
	for _, name := range r.Users {
		u, _ := packagesets.LookupUser(name)
		r.users = append(r.users, User(u))
	}
	for _, name := range r.Binaries {
		r.binaries = append(r.binaries, builtinBinary(name))
	}
	return r, nil
}

// builtinBinary is the built-in release tarball name, or only the name.
func builtinBinary(name string) Binary {
	b, _ := packagesets.LookupBinary(name)
	return Binary{Name: name, Version: b.Version, SHA256: b.SHA256, Files: b.Files}
}
