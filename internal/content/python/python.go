//go:generate packer-sdc mapstructure-to-hcl2 -type PythonEnv
//go:generate packer-sdc struct-markdown

// Package python is the `python_envs` content kind: Python virtual
// environments (or system interpreters) with pinned requirements
// installed by pip, their requirements (and, fetched on the host, their
// wheels) staged before any package work. Its VM side is python.sh.
package python

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
