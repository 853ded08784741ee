package fatimage

import (
	"errors"
	"fmt"
)

// localUser is one appliances_local_users entry ({user: <the user
// module's arguments>, group: <the group module's>, enable: bool}) as a
// User; skip is true for a disabled entry and for the login user's
// (local: true, move_home: the appliance moves its home, as
// move_login_home does here).
func localUser(e any) (u User, skip bool, err error) {
	m, ok := e.(map[string]any)
	if !ok {
		return u, false, errors.New("not a mapping")
	}
	if en, ok := m["enable"]; ok && !truthy(en) {
		return u, true, nil
	}
	user, ok := m["user"].(map[string]any)
	if !ok {
		return u, false, errors.New("no user")
	}
	if truthy(user["local"]) || truthy(user["move_home"]) {
		return u, true, nil
	}
	if u, err = moduleUser(user); err != nil {
		return u, false, err
	}
	if g, ok := m["group"].(map[string]any); ok {
		err = entryGroup(&u, g)
	}
	return u, false, err
}

// entryGroup puts an entry's group (the group module's arguments, made
// before any user) into u. The user module gives the user that group
// only when its `group` names it: without one the group is made on its
// own, and the user's primary group is decided on the VM as the module
// decides it (useradd -N when a group of the user's name exists).
func entryGroup(u *User, g map[string]any) error {
	name, _ := g["name"].(string)
	if name == "" {
		return fmt.Errorf("user %q: the entry's group has no name", u.Name)
	}
	switch u.Group {
	case "":
		u.PrimaryGroup = new(bool)
	case name:
	default:
		// one User makes one group: the entry's and the user's
		// differing would need two
		return fmt.Errorf("user %q: its group %q is not the entry's group %q (the plugin makes one group per user)", u.Name, u.Group, name)
	}
	u.Group = name
	u.GID, _ = number(g["gid"])
	return nil
}

// podmanUser is one podman_users entry (the user module's arguments).
func podmanUser(e any) (User, bool, error) {
	args, ok := e.(map[string]any)
	if !ok {
		return User{}, false, errors.New("not a mapping")
	}
	u, err := moduleUser(args)
	return u, false, err
}

// moduleUser is the User the user module makes from its arguments.
func moduleUser(user map[string]any) (u User, err error) {
	u.Name, _ = user["name"].(string)
	uid, ok := number(user["uid"])
	if u.Name == "" || !ok {
		return u, fmt.Errorf("user %q: a name and a uid are needed (the plugin creates users with fixed ids)", u.Name)
	}
	u.UID = uid
	u.Home, _ = user["home"].(string)
	u.Shell, _ = user["shell"].(string)
	u.System = truthy(user["system"])
	u.Group, _ = user["group"].(string)
	// the user module creates the home unless told not to
	u.CreateHome = true
	if ch, ok := user["create_home"]; ok {
		u.CreateHome = truthy(ch)
	}
	if u.Home == "" && u.CreateHome {
		u.Home = "/home/" + u.Name // useradd's default, which the user module keeps
	}
	return u, nil
}

// truthy is Ansible's `| bool` of a resolved value.
func truthy(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case string:
		switch x {
		case "yes", "on", "1", "true", "True", "y", "t":
			return true
		}
	case float64:
		return x == 1
	}
	return false
}

// number is a resolved integer (JSON's float64, or a templated string).
func number(v any) (int, bool) {
	switch x := v.(type) {
	case float64:
		return int(x), x == float64(int(x))
	case string:
		var n int
		_, err := fmt.Sscan(x, &n)
		return n, err == nil
	}
	return 0, false
}
