package fatimage

import (
	"fmt"
	"regexp"
	"strings"
)

// Python requirements pinned to a git tag or commit (issue #15: the
// appliance installs slurm-openstack-tools from its git tag v3.0). Two
// forms, as pip takes them: PEP 508's `name @ git+https://host/repo.git@ref`
// and pip's `git+https://host/repo.git@ref#egg=name`. The VM's pip clones
// the repository at the ref and builds it; the commit the ref resolved to
// (pip's direct_url.json) is recorded in image.json.

var (
	reGitPEP508 = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9._-]*)\s*@\s*git\+(https?://[^\s@#]+)@([^\s@#/]+)$`)
	reGitEgg    = regexp.MustCompile(`^git\+(https?://[^\s@#]+)@([^\s@#/]+)#egg=([A-Za-z0-9][A-Za-z0-9._-]*)$`)
	reCommitID  = regexp.MustCompile(`^[0-9a-f]{40}$`)
)

// gitRequirement is a requirement pinned to a git ref.
type gitRequirement struct {
	Name, URL, Ref string
}

// parseGitRequirement reads either form; ok is false for anything else.
func parseGitRequirement(l string) (gitRequirement, bool) {
	if m := reGitPEP508.FindStringSubmatch(l); m != nil {
		return gitRequirement{m[1], m[2], m[3]}, true
	}
	if m := reGitEgg.FindStringSubmatch(l); m != nil {
		return gitRequirement{m[3], m[1], m[2]}, true
	}
	return gitRequirement{}, false
}

// looksGit reports whether a requirement means to be a git one (then a
// malformed one is said so, not taken for a bad name==version pin).
func looksGit(l string) bool { return strings.Contains(l, "git+") }

// requirementPin is a requirement as image.json's pins record it: the
// name==version without hashes, or the whole git requirement.
func requirementPin(l string) string {
	if g, ok := parseGitRequirement(l); ok {
		return g.Name + " @ git+" + g.URL + "@" + g.Ref
	}
	return strings.Fields(l)[0]
}

// gitRequirements are e's git requirements, in order.
func (e PythonEnv) gitRequirements() []gitRequirement {
	lines, _ := e.requirementLines()
	var out []gitRequirement
	for _, l := range lines {
		if g, ok := parseGitRequirement(l); ok {
			out = append(out, g)
		}
	}
	return out
}

// validatePythonGit checks what the git requirements need beyond their
// form: pip cannot check a hash of a VCS requirement, and with
// content_source = "host" the plugin uploads only wheels it downloaded,
// which a git checkout is not.
func validatePythonGit(envs []PythonEnv, source string) []error {
	var errs []error
	for i, e := range envs {
		gits := e.gitRequirements()
		if len(gits) == 0 {
			continue
		}
		add := itemErrs(&errs, "python_envs", i)
		lines, _ := e.requirementLines()
		for _, l := range lines {
			if strings.Contains(l, "--hash=") {
				add("%s is a git requirement: pip cannot check hashes once one requirement is from git; pin the others by version only", gits[0].Name)
				break
			}
		}
		if source == "host" {
			add("%s is a git requirement, which the VM's pip clones and builds: content_source = \"host\" uploads only wheels (set content_source = \"vm\")", gits[0].Name)
		}
	}
	return errs
}

// addPythonGitCommits reports, after environment i's install, the
// commit each of its git requirements was installed from.
func addPythonGitCommits(sc *vmScript, i int, e PythonEnv) {
	py := e.interpreter()
	if !e.System {
		py = e.Path + "/bin/python"
	}
	for _, g := range e.gitRequirements() {
		sc.call("fatimage_pip_git_commit", fmt.Sprintf("python_envs[%d]", i), py, g.Name)
	}
}

// parsePythonGitCommits reads the "python-git-commit python_envs[i] name
// commit" lines into label+" "+name -> commit, and fails naming a git
// requirement without one.
func parsePythonGitCommits(out string, envs []PythonEnv) (map[string]string, error) {
	got := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) == 4 && f[0] == "python-git-commit" && reCommitID.MatchString(f[3]) {
			got[f[1]+" "+f[2]] = f[3]
		}
	}
	commits := map[string]string{}
	for i, e := range envs {
		for _, g := range e.gitRequirements() {
			what := fmt.Sprintf("python_envs[%d]", i)
			c, ok := got[what+" "+g.Name]
			if !ok {
				return nil, fmt.Errorf("%s: %s: pip did not record the commit it installed from (direct_url.json)", what, g.Name)
			}
			commits[e.label()+" "+g.Name] = c
		}
	}
	return commits, nil
}

// imagePythonGitRecord is image.json's `python_git`: per "<env> <name>"
// the repository, ref and the commit installed.
func (s *state) imagePythonGitRecord() map[string]imageGit {
	var r map[string]imageGit
	for _, e := range s.plan.PythonEnvs {
		for _, g := range e.gitRequirements() {
			if r == nil {
				r = map[string]imageGit{}
			}
			k := e.label() + " " + g.Name
			r[k] = imageGit{Repo: g.URL, Ref: g.Ref, Commit: s.content.pythonGitCommits[k]}
		}
	}
	return r
}
