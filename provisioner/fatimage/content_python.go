//go:generate packer-sdc struct-markdown

package fatimage

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/safepath"
)

// PythonEnv is a Python virtual environment (or, with `system`, the
// interpreter itself) with pinned requirements installed by pip.
type PythonEnv struct {
	// Absolute directory of the venv, e.g. /opt/jupyter-py312. Not with
	// `system`.
	Path string `mapstructure:"path"`
	// Interpreter that creates the venv (or is installed into with
	// `system`): a command name or an absolute path. Default python3.
	Interpreter string `mapstructure:"interpreter"`
	// Requirements, each pinned exactly: `name==version`, optionally with
	// `--hash=sha256:<hex>` (then pip requires hashes for all), or to a git
	// tag or commit as `name @ git+https://host/repo.git@<ref>` (or pip's
	// `git+https://host/repo.git@<ref>#egg=name`): the VM's pip clones and
	// builds it, and the commit installed is recorded in image.json
	// (`content.python_git`). Pin its dependencies alongside.
	Requirements []string `mapstructure:"requirements"`
	// Local requirements file with exact pins (comments and blank lines
	// allowed), installed with the `requirements`.
	RequirementsFile string `mapstructure:"requirements_file"`
	// Package index (pip --index-url). Default https://pypi.org/simple.
	IndexURL string `mapstructure:"index_url"`
	// Extra package index (pip --extra-index-url).
	ExtraIndexURL string `mapstructure:"extra_index_url"`
	// Install into the interpreter's own site-packages, as root, instead
	// of a venv.
	System bool `mapstructure:"system"`
	// Owner of the venv as user or user:group. Default root:root.
	Owner string `mapstructure:"owner"`
}

var (
	rePin    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9,._-]+\])?==[A-Za-z0-9.+!_-]+((\s+|\s*\\\s*)--hash=sha256:[0-9a-f]{64})*$`)
	reInterp = regexp.MustCompile(`^(/[A-Za-z0-9._/-]+|[A-Za-z0-9._-]+)$`)
)

const defaultIndexURL = "https://pypi.org/simple"

func (e PythonEnv) interpreter() string {
	if e.Interpreter == "" {
		return "python3"
	}
	return e.Interpreter
}

func (e PythonEnv) indexURL() string {
	if e.IndexURL == "" {
		return defaultIndexURL
	}
	return e.IndexURL
}

// label names the environment in messages and image.json.
func (e PythonEnv) label() string {
	if e.System {
		return e.interpreter()
	}
	return e.Path
}

// requirementLines are every requirement, the file's after the inline
// ones, as pip reads them (continuation lines joined).
func (e PythonEnv) requirementLines() ([]string, error) {
	reqs, err := e.requirements()
	var lines []string
	for _, r := range reqs {
		lines = append(lines, r.text)
	}
	return lines, err
}

func validatePythonEnvs(es []PythonEnv) []error {
	var errs []error
	paths := map[string]bool{}
	for i, e := range es {
		add := itemErrs(&errs, "python_envs", i)
		switch {
		case e.System && e.Path != "":
			add("path and system = true exclude each other")
		case !e.System && safepath.Dest(e.Path, false) != "":
			add("path %q %s (or set system = true)", e.Path, safepath.Dest(e.Path, false))
		case paths[e.label()]:
			add("%s is configured twice", e.label())
		}
		paths[e.label()] = true
		if !reInterp.MatchString(e.interpreter()) {
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
			if _, ok := parseGitRequirement(l.text); ok {
				continue
			} else if looksGit(l.text) {
				add("%sgit requirement %q must be `name @ git+https://host/repo.git@<tag or commit>` or `git+https://host/repo.git@<tag or commit>#egg=name`, without credentials", where, withoutUserInfo(l.text))
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
		if msg := checkHTTPURL("index_url", e.indexURL()); msg != "" {
			add("%s", msg)
		}
		if e.ExtraIndexURL != "" {
			if msg := checkHTTPURL("extra_index_url", e.ExtraIndexURL); msg != "" {
				add("%s", msg)
			}
		}
		if !validOwner(e.Owner) {
			add("owner %q must be user or user:group", e.Owner)
		} else if e.System && e.Owner != "" {
			add("owner applies to a venv, not to system = true")
		}
	}
	return errs
}

// pythonReq is where environment i's requirements land in the work dir;
// pythonWheels where the host's wheels do.
func pythonReq(workDir string, i int) string {
	return path.Join(workDir, fmt.Sprintf("python-%d.txt", i))
}
func pythonWheels(workDir string, i int) string {
	return path.Join(workDir, fmt.Sprintf("python-%d-wheels", i))
}

// fetchPython stages the requirements files and, with content_source =
// "host", the wheels pip downloads on the host (hashes checked there),
// uploaded as one archive; the VM's pip then installs only from them.
func (s *state) fetchPython(ctx context.Context, sc *vmScript) error {
	c, p := s.cfg, s.plan
	var files []staged
	for i, e := range p.PythonEnvs {
		what := fmt.Sprintf("python_envs[%d]", i)
		lines, err := e.requirementLines()
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		req := strings.Join(lines, "\n") + "\n"
		files = append(files, staged{path.Base(pythonReq(s.workDir, i)), []byte(req)})
		if c.contentSource() != "host" {
			continue
		}
		wheels, err := s.downloadWheels(ctx, what, e, req)
		if err != nil {
			return err
		}
		for _, w := range wheels {
			files = append(files, staged{path.Base(pythonWheels(s.workDir, i)) + "/" + w.Name, w.Data})
		}
	}
	if err := s.stage(sc, files...); err != nil {
		return fmt.Errorf("python_envs: %w", err)
	}
	return nil
}

// downloadWheels runs pip download on the host (wheels only, so nothing
// is built) into a temporary directory.
func (s *state) downloadWheels(ctx context.Context, what string, e PythonEnv, req string) ([]staged, error) {
	dir, err := os.MkdirTemp("", "fatimage-wheels-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	reqFile := filepath.Join(dir, "requirements.txt")
	if err := os.WriteFile(reqFile, []byte(req), 0o600); err != nil {
		return nil, err
	}
	args := []string{"-m", "pip", "download", "--no-input", "--disable-pip-version-check", "--only-binary=:all:",
		"--dest", filepath.Join(dir, "wheels"), "--index-url", e.indexURL(), "-r", reqFile}
	if e.ExtraIndexURL != "" {
		args = append(args, "--extra-index-url", e.ExtraIndexURL)
	}
	// pip ignores a plain-http index unless its host is trusted (as on the VM)
	for _, u := range []string{e.indexURL(), e.ExtraIndexURL} {
		if pu, err := url.Parse(u); err == nil && pu.Scheme == "http" {
			args = append(args, "--trusted-host", pu.Host)
		}
	}
	s.ui.Say(fmt.Sprintf("fatimage: %s: pip download on the host from %s", what, e.indexURL()))
	cmd := exec.CommandContext(ctx, "python3", args...)
	cmd.Env = append(os.Environ(), "PIP_CONFIG_FILE=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%s: pip download on the host: %v; nothing installed\n%s", what, err, tail(string(out), 20))
	}
	entries, err := os.ReadDir(filepath.Join(dir, "wheels"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var out []staged
	for _, en := range entries {
		data, err := os.ReadFile(filepath.Join(dir, "wheels", en.Name()))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, staged{en.Name(), data})
	}
	return out, nil
}

// scriptInstallPython installs each environment's requirements.
func scriptInstallPython(envs []PythonEnv, source, workDir string) *vmScript {
	sc := newScript("python")
	for i, e := range envs {
		venv := e.Path
		if e.System {
			venv = ""
		}
		wheels := ""
		if source == "host" {
			wheels = pythonWheels(workDir, i)
		}
		u, g := splitOwner(e.Owner)
		sc.call("fatimage_pip", fmt.Sprintf("python_envs[%d]", i), e.interpreter(), venv, pythonReq(workDir, i), e.indexURL(), e.ExtraIndexURL, wheels, u, g)
		addPythonGitCommits(sc, i, e)
	}
	return sc
}
