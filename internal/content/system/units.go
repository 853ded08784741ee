package system

import (
	"path"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
)

// Units is the systemd_units kind.
type Units struct{ shared }

// Option implements content.Kind.
func (Units) Option() string { return "systemd_units" }

// ID is the unit's name.
func (Units) ID(u SystemdUnit) string { return u.Name }

// Validate checks names, states and drop-in names.
func (Units) Validate(list []SystemdUnit) []error {
	var errs []error
	add := errf(&errs)
	units := map[string]bool{}
	for i, u := range list {
		if !reUnit.MatchString(u.Name) {
			add("systemd_units[%d]: name %q must be a unit name with its suffix, e.g. mysql.service", i, u.Name)
		} else if units[u.Name] {
			add("systemd_units[%d]: duplicate unit %s", i, u.Name)
		}
		units[u.Name] = true
		switch u.UnitState() {
		case "enabled", "disabled":
		case "masked":
			if u.Content != "" {
				add("systemd_units[%d] (%s): state masked with content: systemd cannot mask a unit whose file is in /etc/systemd/system", i, u.Name)
			}
		default:
			add("systemd_units[%d] (%s): state %q is not one of enabled, disabled, masked", i, u.Name, u.State)
		}
		for k := range u.DropIns {
			if !reConfName.MatchString(k) {
				add("systemd_units[%d] (%s): drop-in name %q must be a plain file name without .conf", i, u.Name, k)
			}
		}
	}
	return errs
}

// Install writes the unit files and drop-ins (systemd reloads when one
// changed), then sets each unit's state.
func (Units) Install(env content.Env, list []SystemdUnit) (content.Script, error) {
	sc := putFiles(env, "systemd_units", "systemd units", true, unitFiles(list))
	for _, u := range list {
		sc.Call("fatimage_unit_state", u.Name, u.UnitState())
	}
	return sc, nil
}

func unitFiles(list []SystemdUnit) []File {
	var out []File
	for _, u := range list {
		if u.Content != "" {
			out = append(out, File{path.Join("/etc/systemd/system", u.Name), withNewline(u.Content)})
		}
		for _, k := range sortedKeys(u.DropIns) {
			out = append(out, File{path.Join("/etc/systemd/system", u.Name+".d", k+".conf"), withNewline(u.DropIns[k])})
		}
	}
	return out
}
