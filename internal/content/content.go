// Package content is what a content kind of the `fatimage` provisioner
// implements: an option holding a list of items (line_edits, ...), which
// the template and the built-in groups set. The provisioner merges the
// items of both into its build plan (the template's replace a group's of
// the same ID), checks them at `packer validate` and installs them on
// the VM in the kind's step; a kind is one package under internal/content,
// its field of the provisioner's ContentOptions and one line in its step
// table (docs/development.md, "A content kind").
package content

import (
	"context"
	"os"
	"path"
	"slices"
	"strings"
)

// Kind is one content kind over items of type T.
type Kind[T any] interface {
	// Option is the option's name, e.g. "line_edits": errors and the
	// plan's origins name the items by it.
	Option() string
	// ID is an item's identity when the groups' items and the template's
	// merge: a template item replaces a group's of the same ID, and two
	// groups giving one ID different items is an error.
	ID(item T) string
	// Validate checks the items, without network or VM (it runs at
	// `packer validate`); every error starts with "<option>[i]: ", names
	// the field and says why.
	Validate(items []T) []error
	// Install is the script putting the items in place on the VM, in
	// the kind's step; an error (a local file gone since validate) names
	// the item.
	Install(env Env, items []T) (Script, error)
	// Shell is the kind's own shell functions (its embedded <kind>.sh,
	// `# shellcheck shell=sh`), which the calls of Install use with the
	// provisioner's (fatimage_cause, fatimage_run, ...).
	Shell() string
}

// Script is what a kind runs on the VM: calls of the functions of its
// Shell (and of the provisioner's embedded scripts, by name), whose
// arguments the provisioner quotes: Go never writes shell code.
type Script struct {
	// Say is the step's headline, e.g. "line edits (3)".
	Say string
	// Bodies are the provisioner's embedded scripts
	// (provisioner/fatimage/scripts/<name>.sh) the calls use besides
	// the kind's Shell.
	Bodies []string
	// Staged are files uploaded into the run's work dir (Env.WorkDir)
	// before the calls run (0600, one upload for the step). Never
	// credentials.
	Staged []Staged
	// Secrets are credential-bearing files (a registry's auth file),
	// added with Secret: the script gets them in Env.SecretDir, on the
	// tmpfs /run, sent on its stdin and removed when it ends, so no
	// credential is in an argument, a log or a block of the VM's disk.
	Secrets []Staged
	// Calls are the function calls, in order: a function, then its
	// arguments.
	Calls [][]string
}

// Env is what a kind's Fetch, Install and Record know of the run.
type Env struct {
	// WorkDir is the run's private directory on the VM, where Staged
	// files land.
	WorkDir string
	// Source is who fetches URL content: "vm", or "host" (the plugin,
	// through internal/fetch, uploading what it fetched).
	Source string
	// Options are the provisioner's options a kind reads besides its
	// items (the mirror URLs, e.g. grafana_dashboards_url), by name,
	// defaulted.
	Options map[string]string
	// SecretDir is where the script's Secrets land on the VM.
	SecretDir string
	// Registries are container_registries: the TLS and credentials of
	// the container registries (the containers kind).
	Registries []Registry
	// Say shows a line of host-side work (cloning a repository) on the
	// build's output.
	Say func(string)
	// Fetched and Installed are what the kind's calls printed on the VM
	// when fetching and installing (its reports: a sum, a commit; with
	// Fetch.Reports first), for Install and Record; empty before.
	Fetched, Installed string
}

// The two optional interfaces below are asked of a kind by type
// assertion rather than embedded as no-ops in Kind: most kinds (files,
// line_edits, the system settings) place what the template holds,
// fetch nothing and are recorded by the files they write, and a Kind
// with methods that mean nothing for them would be harder to read.

// Fetcher is a kind whose items are fetched and checked before any
// package work, so a bad pin changes nothing.
type Fetcher[T any] interface {
	// Fetch is what fetching the items takes: the provisioner checks
	// the owners, fetches the URLs through its one fetch path, uploads
	// the files and runs the script. Fetch itself touches only the build
	// host, and only with Env.Source "host" beyond reading local sources
	// (a git mirror in the cache); with an empty Env it only describes
	// (the warnings and owners said before a run).
	Fetch(ctx context.Context, env Env, items []T) (Fetch, error)
}

// Recorder is a kind whose items image.json records (and with it the
// manifest and the SBOM made from it).
type Recorder[T any] interface {
	// Record is the kind's entries in image.json's `content`, by key
	// (e.g. "downloads"), none for no items; an error says the scripts
	// did not report what the record needs (a bug, not a result).
	Record(env Env, items []T) (map[string]any, error)
}

// Fetch is the fetch of a kind's items.
type Fetch struct {
	// Warnings are said before the fetch: items not pinned.
	Warnings []string
	// Owners the items will have, checked to exist on the VM first
	// (unless the run creates them).
	Owners []Owner
	// URLs are files fetched into the work dir: by the VM, or (Env.Source
	// "host") by the plugin through internal/fetch (cache, retries,
	// progress, sha256, credentials kept to their origin) and uploaded.
	// Each with a sha256 is then checked on the VM.
	URLs []URL
	// Uploads are files the host made (a git bundle), uploaded into
	// the work dir before the script runs.
	Uploads []Upload
	// Script runs when every URL is in place and checked; its Staged
	// files (local sources, checked on the host) are uploaded first.
	Script Script
	// Reports are report lines the host-side fetch made, as the script
	// would print them (the digest a tag resolved to on the host): put
	// before what the script printed for Check, Warn and Env.Fetched.
	Reports string
	// Check, when set, checks what the script printed (a commit each
	// item reported), failing the fetch when a report is missing.
	Check func(out string) error
	// Warn, when set, is the warnings said once the fetch is checked,
	// from what it found (a tag not pinned, and the digest it gave).
	Warn func(out string) []string
}

// Upload is a file of the build host uploaded to Dst on the VM; Remove:
// a temporary file, removed once uploaded (or when the fetch fails).
// Name names the upload's progress (an image's name), the base name of
// Dst when empty.
type Upload struct {
	What, Path, Dst, Name string
	Remove                bool
}

// URL is one file fetched by URL.
type URL struct {
	What string // names it in messages, e.g. "downloads[0]"
	URL  string
	// SHA256 (hex) the file must have; "" (an explicit opt-out) is not
	// checked.
	SHA256 string
	Dst    string // its path in the work dir
}

// Owner is an item's owner.
type Owner struct{ What, User, Group string }

// Staged is a file for the work dir.
type Staged struct {
	Name string
	Data []byte
}

// Call appends a call of fn with args.
func (s *Script) Call(fn string, args ...string) {
	s.Calls = append(s.Calls, append([]string{fn}, args...))
}

// Secret adds the credential-bearing file name (once) to the script's
// Secrets and returns its path on the VM.
func (s *Script) Secret(env Env, name string, data []byte) string {
	if !slices.ContainsFunc(s.Secrets, func(f Staged) bool { return f.Name == name }) {
		s.Secrets = append(s.Secrets, Staged{name, data})
	}
	return path.Join(env.SecretDir, name)
}

// SplitOwner turns "user" or "user:group" into user and group; empty is
// root:root, a user alone has the group of its name.
func SplitOwner(o string) (string, string) {
	if o == "" {
		return "root", "root"
	}
	u, g, _ := strings.Cut(o, ":")
	if g == "" {
		g = u
	}
	return u, g
}

// Flag is a boolean as the scripts take it: "1" or "0".
func Flag(v bool) string {
	if v {
		return "1"
	}
	return "0"
}

// RemoveUploads removes the temporary files of us.
func RemoveUploads(us []Upload) {
	for _, u := range us {
		if u.Remove {
			_ = os.Remove(u.Path)
		}
	}
}
