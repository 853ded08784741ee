package fatimage

import (
	"fmt"
	"path"
	"regexp"

	"github.com/stackhpc/packer-plugin-fatimage/internal/safepath"
)

// reName is a user, group or executable name.
var reName = regexp.MustCompile(`^[a-z_][a-z0-9_-]*\$?$`)

// validateUsers checks the configured users for duplicates, then every
// field and id clash over the merged list (configured users replace
// built-ins).
func validateUsers(c *Config, p *plan) []error {
	var errs problems
	// Duplicates among the configured users, then every field and id
	// clash over the merged list (configured users replace built-ins).
	confIdx, users := map[string]int{}, map[string]bool{}
	for i, u := range c.Users {
		if users[u.Name] {
			errs.add("users[%d]: duplicate user %q", i, u.Name)
		}
		users[u.Name] = true
		confIdx[u.Name] = i
	}
	uids, groups := map[int]string{}, map[string]int{}
	for _, u := range p.users {
		label := fmt.Sprintf("built-in user %q", u.Name)
		if i, ok := confIdx[u.Name]; ok {
			label = fmt.Sprintf("users[%d]", i)
		}
		if !reName.MatchString(u.Name) || len(u.Name) > 32 {
			errs.add("%s: name %q is not a valid user name", label, u.Name)
		}
		if u.UID == 0 {
			errs.add("%s: uid is required (a fixed id between 1 and 65533)", label)
		} else if u.UID < 0 || u.UID > 65533 {
			errs.add("%s: uid %d must be between 1 and 65533", label, u.UID)
		} else if o, ok := uids[u.UID]; ok && o != u.Name {
			errs.add("%s: uid %d already used by %q", label, u.UID, o)
		} else {
			uids[u.UID] = u.Name
		}
		if u.Group != "" && !reName.MatchString(u.Group) {
			errs.add("%s: group %q is not a valid group name", label, u.Group)
		}
		if u.GID != 0 && u.Group == "" {
			errs.add("%s: gid needs group", label)
		}
		if u.PrimaryGroup != nil && !*u.PrimaryGroup && u.Group == "" {
			errs.add("%s: primary_group = false needs group (the group made on its own)", label)
		}
		if u.Group != "" && (u.GID < 0 || u.GID > 65533) {
			errs.add("%s: gid %d must be between 1 and 65533", label, u.GID)
		}
		if u.Group != "" && u.GID > 0 {
			if g, ok := groups[u.Group]; ok && g != u.GID {
				errs.add("%s: group %q given two gids (%d, %d)", label, u.Group, g, u.GID)
			}
			groups[u.Group] = u.GID
		}
		if u.Home != "" && !path.IsAbs(u.Home) {
			errs.add("%s: home %q must be absolute", label, u.Home)
		} else if msg := safepath.Dest(u.Home, false); u.CreateHome && msg != "" {
			errs.add("%s: home %q %s (create_home makes it the user's)", label, u.Home, msg)
		}
		if u.Shell != "" && !path.IsAbs(u.Shell) {
			errs.add("%s: shell %q must be absolute", label, u.Shell)
		}
	}
	return errs
}
