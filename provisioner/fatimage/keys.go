package fatimage

import (
	"fmt"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/gpgkeys"
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

// defaultKeyPaths fills in the path of entries that name a built-in key
// without one, when that path does not depend on the OS major.
func defaultKeyPaths(keys []GPGKey) {
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

// validateGPGKeys checks gpg_keys (the template's or a group's).
func validateGPGKeys(keys []GPGKey) []error {
	var errs problems
	paths := map[string]int{}
	for i, k := range keys {
		if k.Builtin != "" {
			if _, err := gpgkeys.ByName(k.Builtin, keyMajors[0]); err != nil {
				errs.add("gpg_keys[%d]: builtin %q is not a built-in key (built-in keys: %s)", i, k.Builtin, strings.Join(gpgkeys.Names(), ", "))
				continue
			}
			if k.Key != "" {
				errs.add("gpg_keys[%d]: set key or builtin, not both", i)
			}
		} else if k.Path == "" {
			errs.add("gpg_keys[%d]: path is required (or builtin, for a built-in key)", i)
			continue
		}
		if msg := checkKeyPath(k.Path); k.Path != "" && msg != "" {
			errs.add("gpg_keys[%d]: path %q %s", i, k.Path, msg)
		}
		if j, ok := paths[keyID(k)]; ok {
			errs.add("gpg_keys[%d]: path %s is already gpg_keys[%d]'s", i, keyID(k), j)
		}
		paths[keyID(k)] = i
		if k.Key != "" {
			if err := gpgkeys.Check([]byte(k.Key)); err != nil {
				errs.add("gpg_keys[%d]: key must be an armored PGP public key block: %v", i, err)
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
// the built-in keys of the standard repositories in repos (once each, in
// repos order; for an OS major whose path a gpg_keys entry has, that
// entry replaces it), then the gpg_keys entries.
func (p *plan) imageKeys() []imageKey {
	site := map[string]bool{}
	for _, k := range p.GPGKeys {
		if k.Path != "" {
			site[k.Path] = true
		}
	}
	var out []imageKey
	seen := map[string]bool{}
	for _, r := range p.repos {
		name := r.Name
		if name == "" {
			name = r.RepoName
		}
		k, ok := gpgkeys.ForRepo(name, keyMajors[0]) // every standard repository's key has both majors
		if !ok || seen[k.Name] {
			continue
		}
		seen[k.Name] = true
		if ik := builtinImageKey(k.Name, "", site); len(ik.majorPaths) > 0 {
			out = append(out, ik)
		}
	}
	for _, k := range p.GPGKeys {
		if k.Builtin != "" {
			out = append(out, builtinImageKey(k.Builtin, k.Path, nil))
			continue
		}
		out = append(out, imageKey{path: k.Path, key: k.Key})
	}
	return out
}

// keyCalls stages the keys' blocks and adds the calls writing and
// importing them to sc.
func (s *state) keyCalls(sc *vmScript) error {
	keys := s.plan.imageKeys()
	var files []staged
	for i, k := range keys {
		switch {
		case k.builtin != "":
			for _, m := range keyMajors {
				if k.majorPaths[m] != "" {
					bk, err := gpgkeys.ByName(k.builtin, m)
					if err != nil {
						return err // validated
					}
					files = append(files, staged{keyFile(i) + ".el" + m, bk.Armored()})
				}
			}
		case k.key != "":
			files = append(files, staged{keyFile(i), []byte(k.key)})
		}
	}
	if err := s.stage(sc, files...); err != nil {
		return err
	}
	for i, k := range keys {
		switch {
		case k.builtin != "":
			// install_builtin_key NAME (MAJOR DST SRC)...: "-" for a
			// major whose key a gpg_keys entry replaces
			args := []string{k.builtin}
			for _, m := range keyMajors {
				dst, src := "-", "-"
				if k.majorPaths[m] != "" {
					dst, src = k.majorPaths[m], s.inWorkDir(keyFile(i)+".el"+m)
				}
				args = append(args, m, dst, src)
			}
			sc.call("install_builtin_key", args...)
			continue
		case k.key != "":
			sc.call("install_key", s.inWorkDir(keyFile(i)), k.path)
		}
		sc.call("import_key", k.path)
	}
	return nil
}

func keyFile(i int) string { return fmt.Sprintf("key-%d", i) }
