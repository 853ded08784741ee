package keys

import (
	_ "embed"
	"fmt"
	"path"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
	"github.com/stackhpc/packer-plugin-fatimage/internal/gpgkeys"
	"github.com/stackhpc/packer-plugin-fatimage/internal/safepath"
)

// Keys (issue #15): the appliance writes and imports the key of every
// standard repository (contract sheet section 3) for the image's OS major
// before it uses them, so a site needs no key files. The plugin does the
// same for each standard repository in `repos`: the built-in key for the
// image's OS major is written to the sheet's path (root 0644) and
// imported, exactly as a `gpg_keys` entry with a key is. The OS major is
// read on the VM (/etc/os-release), where the import runs: both majors'
// blocks are staged and the script picks one, so Prepare needs no VM.
// (EPEL's and OpenHPC's paths differ between RL8 and RL9.)
//
// A `gpg_keys` entry with the same path as a built-in replaces it for
// that OS major (the site's key is written instead, or, without `key`,
// the image's own file is imported); `builtin = "<name>"` asks for a
// built-in key no repository brings (RStudio, ceph-release).

// Kind is the gpg_keys kind. Its items are installed by the repos step
// (Script), the repositories' built-in keys first; Install is that
// script without repositories.
type Kind struct{}

var _ content.Kind[GPGKey] = Kind{}

//go:embed keys.sh
var shell string

// Option implements content.Kind.
func (Kind) Option() string { return "gpg_keys" }

// ID is the path (or the built-in's name when its path depends on the
// OS major): a template entry for it replaces a group's.
func (Kind) ID(k GPGKey) string { return "path " + keyID(k) }

// Shell implements content.Kind: keys.sh.
func (Kind) Shell() string { return shell }

// Validate implements content.Kind.
func (Kind) Validate(keys []GPGKey) []error { return validate(keys) }

// Install writes and imports the keys (Script without repositories).
func (Kind) Install(env content.Env, keys []GPGKey) (content.Script, error) {
	return Script(env.WorkDir, nil, keys)
}

// imageKey is one key the repos step imports.
type imageKey struct {
	path string
	// key is written to path first; empty with builtin empty: path is
	// already in the image.
	key string
	// builtin names a built-in key: the VM writes the block for its own
	// OS major to majorPaths[major] (none for a major whose path a
	// gpg_keys entry replaces).
	builtin    string
	majorPaths map[string]string
}

// keyMajors are the OS majors with built-in keys.
var keyMajors = []string{"8", "9"}

// builtinKeyPath is the path a built-in key is written to when it is the
// same for every OS major (RStudio, ceph, ...; not epel or openhpc), else
// "".
func builtinKeyPath(name string) string {
	p := ""
	for _, m := range keyMajors {
		k, err := gpgkeys.ByName(name, m)
		if err != nil || (p != "" && k.Path != p) {
			return ""
		}
		p = k.Path
	}
	return p
}

// DefaultPaths fills in the path of entries that name a built-in key
// without one, when that path does not depend on the OS major.
func DefaultPaths(keys []GPGKey) {
	for i := range keys {
		if keys[i].Path == "" && keys[i].Builtin != "" {
			keys[i].Path = builtinKeyPath(keys[i].Builtin)
		}
	}
}

// keyID is a gpg_keys entry's identity: its path, or the built-in's name
// when its path depends on the OS major.
func keyID(k GPGKey) string {
	if k.Path == "" {
		return "of builtin " + k.Builtin
	}
	return k.Path
}

// validate checks gpg_keys (the template's or a group's).
func validate(keys []GPGKey) []error {
	var errs []error
	paths := map[string]int{}
	for i, k := range keys {
		add := func(f string, a ...any) { errs = append(errs, fmt.Errorf(f, a...)) }
		if k.Builtin != "" {
			if _, err := gpgkeys.ByName(k.Builtin, keyMajors[0]); err != nil {
				add("gpg_keys[%d]: builtin %q is not a built-in key (built-in keys: %s)", i, k.Builtin, strings.Join(gpgkeys.Names(), ", "))
				continue
			}
			if k.Key != "" {
				add("gpg_keys[%d]: set key or builtin, not both", i)
			}
		} else if k.Path == "" {
			add("gpg_keys[%d]: path is required (or builtin, for a built-in key)", i)
			continue
		}
		if msg := checkKeyPath(k.Path); k.Path != "" && msg != "" {
			add("gpg_keys[%d]: path %q %s", i, k.Path, msg)
		}
		if j, ok := paths[keyID(k)]; ok {
			add("gpg_keys[%d]: path %s is already gpg_keys[%d]'s", i, keyID(k), j)
		}
		paths[keyID(k)] = i
		if k.Key != "" {
			if err := gpgkeys.Check([]byte(k.Key)); err != nil {
				add("gpg_keys[%d]: key must be an armored PGP public key block: %v", i, err)
			}
		}
	}
	return errs
}

// builtinImageKey is the built-in key name for every OS major, at its
// own path (or at p when set), skipping the majors whose path is in
// replaced.
func builtinImageKey(name, p string, replaced map[string]bool) imageKey {
	k := imageKey{builtin: name, majorPaths: map[string]string{}}
	for _, m := range keyMajors {
		bk, _ := gpgkeys.ByName(name, m) // every built-in has both majors (gpgkeys' tests)
		dst := bk.Path
		if p != "" {
			dst = p
		}
		if !replaced[dst] {
			k.majorPaths[m] = dst
		}
	}
	return k
}

// imageKeys are the keys the repos step writes and imports, in order:
// the built-in keys of the standard repositories (once each, in repos
// order; for an OS major whose path a gpg_keys entry has, that entry
// replaces it), then the gpg_keys entries.
func imageKeys(repos []string, keys []GPGKey) []imageKey {
	site := map[string]bool{}
	for _, k := range keys {
		if k.Path != "" {
			site[k.Path] = true
		}
	}
	var out []imageKey
	seen := map[string]bool{}
	for _, name := range repos {
		k, ok := gpgkeys.ForRepo(name, keyMajors[0]) // every standard repository's key has both majors
		if !ok || seen[k.Name] {
			continue
		}
		seen[k.Name] = true
		if ik := builtinImageKey(k.Name, "", site); len(ik.majorPaths) > 0 {
			out = append(out, ik)
		}
	}
	for _, k := range keys {
		if k.Builtin != "" {
			out = append(out, builtinImageKey(k.Builtin, k.Path, nil))
			continue
		}
		out = append(out, imageKey{path: k.Path, key: k.Key})
	}
	return out
}

// Script writes and imports the keys of the repositories named (each a
// repository's name in repos, the built-in keys of the standard ones)
// and the gpg_keys entries, their blocks staged in workDir.
func Script(workDir string, repos []string, keys []GPGKey) (content.Script, error) {
	ks := imageKeys(repos, keys)
	sc := content.Script{}
	for i, k := range ks {
		switch {
		case k.builtin != "":
			for _, m := range keyMajors {
				if k.majorPaths[m] != "" {
					bk, err := gpgkeys.ByName(k.builtin, m)
					if err != nil {
						return sc, err // validated
					}
					sc.Staged = append(sc.Staged, content.Staged{Name: keyFile(i) + ".el" + m, Data: bk.Armored()})
				}
			}
		case k.key != "":
			sc.Staged = append(sc.Staged, content.Staged{Name: keyFile(i), Data: []byte(k.key)})
		}
	}
	for i, k := range ks {
		switch {
		case k.builtin != "":
			// install_builtin_key NAME (MAJOR DST SRC)...: "-" for a
			// major whose key a gpg_keys entry replaces
			args := []string{k.builtin}
			for _, m := range keyMajors {
				dst, src := "-", "-"
				if k.majorPaths[m] != "" {
					dst, src = k.majorPaths[m], path.Join(workDir, keyFile(i)+".el"+m)
				}
				args = append(args, m, dst, src)
			}
			sc.Call("install_builtin_key", args...)
			continue
		case k.key != "":
			sc.Call("install_key", path.Join(workDir, keyFile(i)), k.path)
		}
		sc.Call("import_key", k.path)
	}
	return sc, nil
}

func keyFile(i int) string { return fmt.Sprintf("key-%d", i) }

// checkKeyPath is the problem with a gpg_keys path, "" when none: the key
// is written there, so it must be a file of the keys' directory.
func checkKeyPath(p string) string {
	if msg := safepath.Dest(p, false); msg != "" {
		return msg
	}
	if !strings.HasPrefix(p, gpgkeys.Dir) || strings.Contains(strings.TrimPrefix(p, gpgkeys.Dir), "/") {
		return "must be a file in " + gpgkeys.Dir + " (a key written anywhere else replaces that file)"
	}
	return ""
}
