package python

import (
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
	"github.com/stackhpc/packer-plugin-fatimage/internal/safepath"
)

// Validate checks each environment without network or VM; a
// requirements_file must be readable on the build host.
func (Kind) Validate(es []PythonEnv) []error {
	var errs []error
	paths := map[string]bool{}
	for i, e := range es {
		add := content.ItemErrs(&errs, "python_envs", i)
		switch {
		case e.System && e.Path != "":
			add("path and system = true exclude each other")
		case !e.System && safepath.Dest(e.Path, false) != "":
			add("path %q %s (or set system = true)", e.Path, safepath.Dest(e.Path, false))
		case paths[e.Label()]:
			add("%s is configured twice", e.Label())
		}
		paths[e.Label()] = true
		if !reInterp.MatchString(e.InterpreterOrDefault()) {
			add("interpreter %q must be a command name or an absolute path", e.Interpreter)
		}
		if len(e.Requirements) == 0 && e.RequirementsFile == "" {
			add("requirements or requirements_file is required")
		}
		lines, err := e.requirements()
		if err != nil {
			add("requirements_file: %v", err)
		}
		hashed := 0
		for _, l := range lines {
			where := ""
			if l.where != "" {
				where = "requirements_file " + l.where + ": "
			}
			if _, ok := ParseGitRequirement(l.text); ok {
				continue
			} else if looksGit(l.text) {
				add("%sgit requirement %q must be `name @ git+https://host/repo.git@<tag or commit>` or `git+https://host/repo.git@<tag or commit>#egg=name`, without credentials", where, content.WithoutUserInfo(l.text))
				continue
			}
			if !rePin.MatchString(l.text) {
				add("%srequirement %q must be pinned exactly as name==version (optionally with --hash=sha256:...), or to a git tag or commit", where, l.text)
			}
			if strings.Contains(l.text, "--hash=") {
				hashed++
			}
		}
		if hashed > 0 && hashed < len(lines) {
			add("%d of %d requirements have hashes: pip requires a hash on every one once any has one", hashed, len(lines))
		}
		if msg := content.CheckURL("index_url", e.indexURL()); msg != "" {
			add("%s", msg)
		}
		if e.ExtraIndexURL != "" {
			if msg := content.CheckURL("extra_index_url", e.ExtraIndexURL); msg != "" {
				add("%s", msg)
			}
		}
		if !content.ValidOwner(e.Owner) {
			add("owner %q must be user or user:group", e.Owner)
		} else if e.System && e.Owner != "" {
			add("owner applies to a venv, not to system = true")
		}
	}
	return append(errs, checkGitHashes(es)...)
}

// checkGitHashes: pip cannot check a hash of a VCS requirement, so an
// environment with one takes none.
func checkGitHashes(envs []PythonEnv) []error {
	var errs []error
	for i, e := range envs {
		gits := e.GitRequirements()
		if len(gits) == 0 {
			continue
		}
		lines, _ := e.RequirementLines()
		for _, l := range lines {
			if strings.Contains(l, "--hash=") {
				content.ItemErrs(&errs, "python_envs", i)("%s is a git requirement: pip cannot check hashes once one requirement is from git; pin the others by version only", gits[0].Name)
				break
			}
		}
	}
	return errs
}

// CheckSource checks what content_source (source) allows: with "host"
// the plugin uploads only wheels it downloaded, which a git checkout is
// not. (An option of the provisioner, so not a check of Validate.)
func CheckSource(envs []PythonEnv, source string) []error {
	var errs []error
	for i, e := range envs {
		if gits := e.GitRequirements(); len(gits) > 0 && source == "host" {
			content.ItemErrs(&errs, "python_envs", i)("%s is a git requirement, which the VM's pip clones and builds: content_source = \"host\" uploads only wheels (set content_source = \"vm\")", gits[0].Name)
		}
	}
	return errs
}
