package system

import (
	"fmt"
	"path"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
)

// Sysctls is the sysctl kind.
type Sysctls struct{ shared }

// Option implements content.Kind.
func (Sysctls) Option() string { return "sysctl" }

// ID is the drop-in's name.
func (Sysctls) ID(s Sysctl) string { return s.Name }

// Validate checks the keys, values and names.
func (Sysctls) Validate(list []Sysctl) []error {
	var errs []error
	add := errf(&errs)
	var n []string
	for i, s := range list {
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
	return append(errs, names("sysctl", n)...)
}

// Install writes the drop-ins in /etc/sysctl.d.
func (Sysctls) Install(env content.Env, list []Sysctl) (content.Script, error) {
	return putFiles(env, "sysctl", "sysctl", false, sysctlFiles(list)), nil
}

func sysctlFiles(list []Sysctl) []File {
	var out []File
	for _, s := range list {
		var b strings.Builder
		b.WriteString("# written by packer-plugin-fatimage\n")
		for _, k := range sortedKeys(s.Settings) {
			fmt.Fprintf(&b, "%s = %s\n", k, s.Settings[k])
		}
		out = append(out, File{path.Join("/etc/sysctl.d", s.Name+".conf"), b.String()})
	}
	return out
}

// Modprobe is the modprobe_blacklist kind.
type Modprobe struct{ shared }

// Option implements content.Kind.
func (Modprobe) Option() string { return "modprobe_blacklist" }

// ID is the drop-in's name.
func (Modprobe) ID(m ModprobeBlacklist) string { return m.Name }

// Validate checks the modules and names.
func (Modprobe) Validate(list []ModprobeBlacklist) []error {
	var errs []error
	add := errf(&errs)
	var n []string
	for i, m := range list {
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
	return append(errs, names("modprobe_blacklist", n)...)
}

// Install writes the drop-ins in /etc/modprobe.d.
func (Modprobe) Install(env content.Env, list []ModprobeBlacklist) (content.Script, error) {
	return putFiles(env, "modprobe_blacklist", "modprobe blacklist", false, modprobeFiles(list)), nil
}

func modprobeFiles(list []ModprobeBlacklist) []File {
	var out []File
	for _, m := range list {
		var b strings.Builder
		b.WriteString("# written by packer-plugin-fatimage: these modules never load\n")
		for _, mod := range m.Modules {
			fmt.Fprintf(&b, "install %s /bin/false\n", mod)
		}
		out = append(out, File{path.Join("/etc/modprobe.d", m.Name+".conf"), b.String()})
	}
	return out
}

// Confs is a kind of drop-ins with literal content in one directory:
// tmpfiles and limits.
type Confs struct {
	shared
	option, dir string
}

// Tmpfiles and Limits are the tmpfiles and limits kinds.
var (
	Tmpfiles = Confs{option: "tmpfiles", dir: "/etc/tmpfiles.d"}
	Limits   = Confs{option: "limits", dir: "/etc/security/limits.d"}
)

// Option implements content.Kind.
func (k Confs) Option() string { return k.option }

// ID is the drop-in's name.
func (Confs) ID(f ConfigFile) string { return f.Name }

// Validate checks the contents and names.
func (k Confs) Validate(list []ConfigFile) []error {
	var errs []error
	var n []string
	for i, cf := range list {
		n = append(n, cf.Name)
		if strings.TrimSpace(cf.Content) == "" {
			errs = append(errs, fmt.Errorf("%s[%d]: content must not be empty", k.option, i))
		}
	}
	return append(errs, names(k.option, n)...)
}

// Install writes the drop-ins in the kind's directory.
func (k Confs) Install(env content.Env, list []ConfigFile) (content.Script, error) {
	return putFiles(env, k.option, k.option, false, k.files(list)), nil
}

func (k Confs) files(list []ConfigFile) []File {
	var out []File
	for _, f := range list {
		out = append(out, File{path.Join(k.dir, f.Name+".conf"), withNewline(f.Content)})
	}
	return out
}

// KernelArgs is the kernel_args kind.
type KernelArgs struct{ shared }

// Option implements content.Kind.
func (KernelArgs) Option() string { return "kernel_args" }

// ID is the argument's name, without its value: the template's
// rd.auto=0 replaces a group's rd.auto=1.
func (KernelArgs) ID(a string) string { k, _, _ := strings.Cut(a, "="); return k }

// Validate checks each is one argument.
func (KernelArgs) Validate(list []string) []error {
	var errs []error
	for i, a := range list {
		if !reKernArg.MatchString(a) {
			errs = append(errs, fmt.Errorf("kernel_args[%d]: %q must be one argument like rd.auto=1 (no spaces or quotes)", i, a))
		}
	}
	return errs
}

// Install sets the arguments with the provisioner's kernel.sh.
func (KernelArgs) Install(_ content.Env, list []string) (content.Script, error) {
	sc := content.Script{Say: "kernel arguments", Bodies: []string{"kernel"}}
	sc.Call("fatimage_kernel_args", list...)
	return sc, nil
}
