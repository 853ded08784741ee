//go:generate packer-sdc struct-markdown

package fatimage

import (
	"context"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
)

// SystemdUnit is a systemd unit file and/or drop-ins written under
// /etc/systemd/system, then `daemon-reload`, and the unit left enabled,
// disabled or masked. Never started: the image carries configuration,
// not running services.
type SystemdUnit struct {
	// Unit name with its suffix, e.g. mysql.service.
	Name string `mapstructure:"name" required:"true"`
	// Unit file written to /etc/systemd/system/<name>. Empty: the unit
	// comes from a package (or only drop-ins are written).
	Content string `mapstructure:"content"`
	// Drop-ins by file name without .conf, written to
	// /etc/systemd/system/<name>.d/<key>.conf.
	DropIns map[string]string `mapstructure:"drop_ins"`
	// enabled, disabled or masked. Default disabled.
	State string `mapstructure:"state"`
}

// Sysctl is a drop-in in /etc/sysctl.d, applied at boot.
type Sysctl struct {
	// File name without .conf, e.g. 90-opensearch.
	Name string `mapstructure:"name" required:"true"`
	// Keys and values, e.g. { "vm.max_map_count" = "262144" }, written
	// sorted as `key = value`.
	Settings map[string]string `mapstructure:"settings" required:"true"`
}

// ModprobeBlacklist keeps kernel modules from loading: each module gets
// `install <module> /bin/false` in /etc/modprobe.d/<name>.conf.
type ModprobeBlacklist struct {
	// File name without .conf, e.g. appliance.
	Name string `mapstructure:"name" required:"true"`
	// Module names, e.g. ["esp4", "rxrpc"].
	Modules []string `mapstructure:"modules" required:"true"`
}

// ConfigFile is a drop-in file with literal content (tmpfiles.d, limits.d).
type ConfigFile struct {
	// File name without .conf.
	Name string `mapstructure:"name" required:"true"`
	// File content.
	Content string `mapstructure:"content" required:"true"`
}

var (
	reUnit     = regexp.MustCompile(`^[A-Za-z0-9:_.@\\-]+\.(service|socket|timer|target|path|mount|slice)$`)
	reConfName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.@-]*$`)
	reSysctl   = regexp.MustCompile(`^[a-z0-9_][a-z0-9_./*-]*$`)
	reModule   = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	reKernArg  = regexp.MustCompile(`^[A-Za-z0-9_.-]+(=[A-Za-z0-9_.,:/@+=-]+)?$`)
)

func (u SystemdUnit) state() string {
	if u.State == "" {
		return "disabled"
	}
	return u.State
}

// hasSystem reports whether any system setting is configured.
func (c *ContentOptions) hasSystem() bool {
	return len(c.SystemdUnits)+len(c.Sysctls)+len(c.ModprobeBlacklists)+len(c.Tmpfiles)+len(c.Limits)+len(c.KernelArgs) > 0
}

func validateSystemSettings(c *ContentOptions) []error {
	var errs []error
	add := func(f string, a ...any) { errs = append(errs, fmt.Errorf(f, a...)) }
	validateUnits(c.SystemdUnits, add)
	validateDropInFiles(c, add)
	return errs
}

// validateUnits checks systemd_units.
func validateUnits(list []SystemdUnit, add func(string, ...any)) {
	units := map[string]bool{}
	for i, u := range list {
		if !reUnit.MatchString(u.Name) {
			add("systemd_units[%d]: name %q must be a unit name with its suffix, e.g. mysql.service", i, u.Name)
		} else if units[u.Name] {
			add("systemd_units[%d]: duplicate unit %s", i, u.Name)
		}
		units[u.Name] = true
		switch u.state() {
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
}

// validateDropInFiles checks the settings written as drop-in files:
// sysctl, modprobe_blacklist, tmpfiles, limits and kernel_args.
func validateDropInFiles(c *ContentOptions, add func(string, ...any)) {
	names := func(field string, list []string) {
		seen := map[string]bool{}
		for i, n := range list {
			if !reConfName.MatchString(n) || strings.HasSuffix(n, ".conf") {
				add("%s[%d]: name %q must be a plain file name without .conf", field, i, n)
			} else if seen[n] {
				add("%s[%d]: duplicate name %q", field, i, n)
			}
			seen[n] = true
		}
	}
	var n []string
	for i, s := range c.Sysctls {
		n = append(n, s.Name)
		if len(s.Settings) == 0 {
			add("sysctl[%d]: settings must not be empty", i)
		}
		for k, v := range s.Settings {
			if !reSysctl.MatchString(k) {
				add("sysctl[%d]: key %q is not a sysctl name like vm.max_map_count", i, k)
			}
			if v == "" || strings.ContainsAny(v, "\n\r") {
				add("sysctl[%d]: value of %s must be one non-empty line", i, k)
			}
		}
	}
	names("sysctl", n)
	n = nil
	for i, m := range c.ModprobeBlacklists {
		n = append(n, m.Name)
		if len(m.Modules) == 0 {
			add("modprobe_blacklist[%d]: modules must not be empty", i)
		}
		for _, mod := range m.Modules {
			if !reModule.MatchString(mod) {
				add("modprobe_blacklist[%d]: %q is not a kernel module name", i, mod)
			}
		}
	}
	names("modprobe_blacklist", n)
	for _, f := range []struct {
		field string
		files []ConfigFile
	}{{"tmpfiles", c.Tmpfiles}, {"limits", c.Limits}} {
		n = nil
		for i, cf := range f.files {
			n = append(n, cf.Name)
			if strings.TrimSpace(cf.Content) == "" {
				add("%s[%d]: content must not be empty", f.field, i)
			}
		}
		names(f.field, n)
	}
	for i, a := range c.KernelArgs {
		if !reKernArg.MatchString(a) {
			add("kernel_args[%d]: %q must be one argument like rd.auto=1 (no spaces or quotes)", i, a)
		}
	}
}

// systemFiles are every file the system settings write, in order.
func systemFiles(c *ContentOptions) []systemFile {
	var out []systemFile
	for _, u := range c.SystemdUnits {
		if u.Content != "" {
			out = append(out, systemFile{path.Join("/etc/systemd/system", u.Name), withNewline(u.Content)})
		}
		for _, k := range sortedKeys(u.DropIns) {
			out = append(out, systemFile{path.Join("/etc/systemd/system", u.Name+".d", k+".conf"), withNewline(u.DropIns[k])})
		}
	}
	for _, s := range c.Sysctls {
		var b strings.Builder
		b.WriteString("# written by packer-plugin-fatimage\n")
		for _, k := range sortedKeys(s.Settings) {
			fmt.Fprintf(&b, "%s = %s\n", k, s.Settings[k])
		}
		out = append(out, systemFile{path.Join("/etc/sysctl.d", s.Name+".conf"), b.String()})
	}
	for _, m := range c.ModprobeBlacklists {
		var b strings.Builder
		b.WriteString("# written by packer-plugin-fatimage: these modules never load\n")
		for _, mod := range m.Modules {
			fmt.Fprintf(&b, "install %s /bin/false\n", mod)
		}
		out = append(out, systemFile{path.Join("/etc/modprobe.d", m.Name+".conf"), b.String()})
	}
	for _, f := range c.Tmpfiles {
		out = append(out, systemFile{path.Join("/etc/tmpfiles.d", f.Name+".conf"), withNewline(f.Content)})
	}
	for _, f := range c.Limits {
		out = append(out, systemFile{path.Join("/etc/security/limits.d", f.Name+".conf"), withNewline(f.Content)})
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

func withNewline(s string) string {
	if strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// stepSystem writes the system settings' files (staged as one upload),
// reloads systemd when a unit changed and sets each unit's state.
func stepSystem(ctx context.Context, s *state) error {
	p := s.plan
	s.say("system settings")
	var st []staged
	// with units configured, systemd reloads when a file changed
	puts := []string{flag01(len(p.SystemdUnits) > 0)}
	for i, f := range systemFiles(&p.ContentOptions) {
		name := fmt.Sprintf("system-%d", i)
		st = append(st, staged{name, []byte(f.Content)})
		puts = append(puts, path.Join(s.workDir, name), f.Path)
	}
	sc := newScript("system")
	if err := s.stage(sc, st...); err != nil {
		return fmt.Errorf("system settings: %w", err)
	}
	sc.call("fatimage_put_files", puts...)
	for _, u := range p.SystemdUnits {
		sc.call("fatimage_unit_state", u.Name, u.state())
	}
	if len(p.KernelArgs) > 0 {
		sc.use("kernel").call("fatimage_kernel_args", p.KernelArgs...)
	}
	_, err := s.runScript(ctx, sc)
	return err
}

func (s *state) imageSystemRecord() *imageSystem {
	p := s.plan
	if !p.hasSystem() {
		return nil
	}
	r := &imageSystem{}
	for _, u := range p.SystemdUnits {
		if r.Units == nil {
			r.Units = map[string]string{}
		}
		r.Units[u.Name] = u.state()
	}
	for _, f := range systemFiles(&p.ContentOptions) {
		r.Files = append(r.Files, f.Path)
	}
	r.KernelArgs = p.KernelArgs
	return r
}
