package python

import (
	"context"
	_ "embed"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/git"
)

// Kind is the python_envs kind.
type Kind struct{}

var (
	_ content.Kind[PythonEnv]     = Kind{}
	_ content.Fetcher[PythonEnv]  = Kind{}
	_ content.Recorder[PythonEnv] = Kind{}
)

var (
	rePin    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9,._-]+\])?==[A-Za-z0-9.+!_-]+((\s+|\s*\\\s*)--hash=sha256:[0-9a-f]{64})*$`)
	reInterp = regexp.MustCompile(`^(/[A-Za-z0-9._/-]+|[A-Za-z0-9._-]+)$`)
)

// DefaultIndexURL is pip's index, the default of index_url (and of the
// provisioner's python_index_url).
const DefaultIndexURL = "https://pypi.org/simple"

//go:embed python.sh
var shell string

// Option implements content.Kind.
func (Kind) Option() string { return "python_envs" }

// ID is the environment's Label: a template entry for it replaces a
// group's.
func (Kind) ID(e PythonEnv) string { return e.Label() }

// Shell implements content.Kind: python.sh.
func (Kind) Shell() string { return shell }

// InterpreterOrDefault is the interpreter, defaulted.
func (e PythonEnv) InterpreterOrDefault() string {
	if e.Interpreter == "" {
		return "python3"
	}
	return e.Interpreter
}

func (e PythonEnv) indexURL() string {
	if e.IndexURL == "" {
		return DefaultIndexURL
	}
	return e.IndexURL
}

// Label names the environment in messages and image.json: its path, or
// the interpreter with system = true.
func (e PythonEnv) Label() string {
	if e.System {
		return e.InterpreterOrDefault()
	}
	return e.Path
}

// RequirementLines are every requirement, the file's after the inline
// ones, as pip reads them (continuation lines joined).
func (e PythonEnv) RequirementLines() ([]string, error) {
	reqs, err := e.requirements()
	var lines []string
	for _, r := range reqs {
		lines = append(lines, r.text)
	}
	return lines, err
}

// hashed reports whether e's requirements carry hashes (then all do:
// validation refuses a mix).
func (e PythonEnv) hashed() bool {
	lines, _ := e.requirements()
	for _, l := range lines {
		if strings.Contains(l.text, "--hash=") {
			return true
		}
	}
	return false
}

// reqFile is where environment i's requirements land in the work dir;
// wheelsDir where the host's wheels do.
func reqFile(workDir string, i int) string {
	return path.Join(workDir, fmt.Sprintf("python-%d.txt", i))
}
func wheelsDir(workDir string, i int) string {
	return path.Join(workDir, fmt.Sprintf("python-%d-wheels", i))
}

// warnings flag a plain-http index (pip is told to trust its host, so
// nothing checks what it serves but hash pins) and an environment with a
// git requirement (pip then checks no hash in it) or without hashes.
func warnings(es []PythonEnv) []string {
	var out []string
	for i, e := range es {
		for _, o := range [][2]string{{"index_url", e.indexURL()}, {"extra_index_url", e.ExtraIndexURL}} {
			if u, err := url.Parse(o[1]); err == nil && u.Scheme == "http" {
				out = append(out, fmt.Sprintf("python_envs[%d]: %s %s is plain http: pip trusts the host (--trusted-host) and what it serves is not verified unless pinned by hash", i, o[0], o[1]))
			}
		}
		if g := e.GitRequirements(); len(g) > 0 {
			out = append(out, fmt.Sprintf("python_envs[%d]: %s is a git requirement: pip verifies no hash in %s (the commit installed is recorded in image.json)", i, g[0].Name, e.Label()))
		} else if !e.hashed() {
			out = append(out, fmt.Sprintf("python_envs[%d]: the requirements of %s carry no --hash: the pinned versions (recorded in image.json) are installed, their content not verified", i, e.Label()))
		}
	}
	return out
}

// Fetch stages the requirements files and, with content_source =
// "host", the wheels pip downloads on the host (hashes checked there);
// the VM's pip then installs only from them.
func (Kind) Fetch(ctx context.Context, env content.Env, es []PythonEnv) (content.Fetch, error) {
	f := content.Fetch{Warnings: warnings(es)}
	for i, e := range es {
		what := fmt.Sprintf("python_envs[%d]", i)
		u, g := content.SplitOwner(e.Owner)
		f.Owners = append(f.Owners, content.Owner{What: what, User: u, Group: g})
		lines, err := e.RequirementLines()
		if err != nil {
			return f, fmt.Errorf("%s: %w", what, err)
		}
		req := strings.Join(lines, "\n") + "\n"
		f.Script.Staged = append(f.Script.Staged, content.Staged{Name: path.Base(reqFile(env.WorkDir, i)), Data: []byte(req)})
		if env.Source != "host" {
			continue
		}
		wheels, err := downloadWheels(ctx, env.Say, what, e, req)
		if err != nil {
			return f, err
		}
		for _, w := range wheels {
			f.Script.Staged = append(f.Script.Staged, content.Staged{Name: path.Base(wheelsDir(env.WorkDir, i)) + "/" + w.Name, Data: w.Data})
		}
	}
	return f, nil
}

// Install installs each environment's requirements, then reports the
// commit each git requirement was installed from.
func (Kind) Install(env content.Env, es []PythonEnv) (content.Script, error) {
	var sc content.Script
	for i, e := range es {
		venv := e.Path
		if e.System {
			venv = ""
		}
		wheels := ""
		if env.Source == "host" {
			wheels = wheelsDir(env.WorkDir, i)
		}
		u, g := content.SplitOwner(e.Owner)
		what := fmt.Sprintf("python_envs[%d]", i)
		sc.Call("fatimage_pip", what, e.InterpreterOrDefault(), venv, reqFile(env.WorkDir, i), e.indexURL(), e.ExtraIndexURL, wheels, u, g)
		py := e.InterpreterOrDefault()
		if !e.System {
			py = e.Path + "/bin/python"
		}
		for _, g := range e.GitRequirements() {
			sc.Call("fatimage_pip_git_commit", what, py, g.Name)
		}
	}
	return sc, nil
}

// Record is what image.json records of the environments: `python`, the
// pins by Label, and `python_git`, each git requirement by "<label>
// <name>" with the commit installed (the install's report; a missing one
// fails naming the requirement).
func (Kind) Record(env content.Env, es []PythonEnv) (map[string]any, error) {
	commits, err := ParseGitCommits(env.Installed, es)
	if err != nil || len(es) == 0 {
		return nil, err
	}
	pins, gits := map[string][]string{}, map[string]git.Record{}
	for _, e := range es {
		lines, _ := e.RequirementLines()
		for i, l := range lines {
			lines[i] = requirementPin(l) // the pin, without hashes
		}
		pins[e.Label()] = lines
		for _, g := range e.GitRequirements() {
			k := e.Label() + " " + g.Name
			gits[k] = git.Record{Repo: g.URL, Ref: g.Ref, Commit: commits[k]}
		}
	}
	r := map[string]any{"python": pins}
	if len(gits) > 0 {
		r["python_git"] = gits
	}
	return r, nil
}

// ParseGitCommits reads the "python-git-commit python_envs[i] name
// commit" lines into label+" "+name -> commit, and fails naming a git
// requirement without one.
func ParseGitCommits(out string, es []PythonEnv) (map[string]string, error) {
	got := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) == 4 && f[0] == "python-git-commit" && reCommitID.MatchString(f[3]) {
			got[f[1]+" "+f[2]] = f[3]
		}
	}
	commits := map[string]string{}
	for i, e := range es {
		for _, g := range e.GitRequirements() {
			what := fmt.Sprintf("python_envs[%d]", i)
			c, ok := got[what+" "+g.Name]
			if !ok {
				return nil, fmt.Errorf("%s: %s: pip did not record the commit it installed from (direct_url.json)", what, g.Name)
			}
			commits[e.Label()+" "+g.Name] = c
		}
	}
	return commits, nil
}
