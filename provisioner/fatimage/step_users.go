package fatimage

import (
	"context"
	"fmt"

	"github.com/stackhpc/packer-plugin-fatimage/internal/packagesets"
)

// stepUsers creates the groups and users with fixed ids.
func stepUsers(ctx context.Context, s *state) error {
	s.say("users")
	_, err := s.runScript(ctx, usersScript(s.plan.users))
	return err
}

// usersScript makes every group first, then the users, as the
// appliance's bootstrap.yml does ("Add system user groups", then "Add
// system users"): a user without a primary group then finds the groups
// made apart from their users, and gets useradd -N's group where one is
// of its name.
func usersScript(users []User) *vmScript {
	sc := newScript("users")
	for _, u := range users {
		if u.Group != "" {
			sc.call("ensure_group", u.Group, fmt.Sprint(u.GID), flag01(u.System))
		}
	}
	for _, u := range users {
		sc.call("ensure_user", u.Name, fmt.Sprint(u.UID), u.primaryGroup(), u.Home, u.Shell, flag01(u.System), flag01(u.CreateHome))
	}
	return sc
}

// primaryGroup is the group useradd gets as the user's primary group
// (-g), "" for useradd's default.
func (u User) primaryGroup() string { return packagesets.User(u).Primary() }
