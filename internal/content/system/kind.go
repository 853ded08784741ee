package system

import (
	_ "embed"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
)

var (
	reUnit     = regexp.MustCompile(`^[A-Za-z0-9:_.@\\-]+\.(service|socket|timer|target|path|mount|slice)$`)
	reConfName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.@-]*$`)
	reSysctl   = regexp.MustCompile(`^[a-z0-9_][a-z0-9_./*-]*$`)
	reModule   = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	reKernArg  = regexp.MustCompile(`^[A-Za-z0-9_.-]+(=[A-Za-z0-9_.,:/@+=-]+)?$`)
)

var (
	_ content.Kind[SystemdUnit]       = Units{}
	_ content.Kind[Sysctl]            = Sysctls{}
	_ content.Kind[ModprobeBlacklist] = Modprobe{}
	_ content.Kind[ConfigFile]        = Tmpfiles
	_ content.Kind[ConfigFile]        = Limits
	_ content.Kind[string]            = KernelArgs{}
)

//go:embed system.sh
var shell string

// shared is what every system kind has: system.sh.
type shared struct{}

// Shell implements content.Kind: system.sh, the same for every system
// kind (the step running them all includes it once).
func (shared) Shell() string { return shell }

// File is one file a system setting writes.
type File struct {
	Path    string
	Content string
}

// Files are every file the system settings write, in the order the step
// writes them (image.json records them).
func Files(units []SystemdUnit, sysctls []Sysctl, mods []ModprobeBlacklist, tmpfiles, limits []ConfigFile) []File {
	out := unitFiles(units)
	out = append(out, sysctlFiles(sysctls)...)
	out = append(out, modprobeFiles(mods)...)
	out = append(out, Tmpfiles.files(tmpfiles)...)
	return append(out, Limits.files(limits)...)
}

// putFiles is the script writing fs with system.sh's fatimage_put_files
// (reload: systemd reloads when one changed), staged as <option>-<i>.
func putFiles(env content.Env, option, say string, reload bool, fs []File) content.Script {
	sc := content.Script{Say: say}
	puts := []string{content.Flag(reload)}
	for i, f := range fs {
		name := fmt.Sprintf("%s-%d", option, i)
		sc.Staged = append(sc.Staged, content.Staged{Name: name, Data: []byte(f.Content)})
		puts = append(puts, path.Join(env.WorkDir, name), f.Path)
	}
	if len(fs) > 0 {
		sc.Call("fatimage_put_files", puts...)
	}
	return sc
}

// names reports the bad and the duplicate file names of a drop-in kind.
func names(option string, list []string) []error {
	var errs []error
	seen := map[string]bool{}
	for i, n := range list {
		if !reConfName.MatchString(n) || strings.HasSuffix(n, ".conf") {
			errs = append(errs, fmt.Errorf("%s[%d]: name %q must be a plain file name without .conf", option, i, n))
		} else if seen[n] {
			errs = append(errs, fmt.Errorf("%s[%d]: duplicate name %q", option, i, n))
		}
		seen[n] = true
	}
	return errs
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

func errf(errs *[]error) func(string, ...any) {
	return func(f string, a ...any) { *errs = append(*errs, fmt.Errorf(f, a...)) }
}
