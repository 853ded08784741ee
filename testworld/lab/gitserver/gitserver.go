// Package gitserver is the lab's git server: Debian's real `git
// http-backend` (smart HTTP, the protocol GitHub speaks) behind Go's CGI
// handler, serving bare repositories under GitHub-like owner/name.git
// paths, built by the lab with the tags the appliance pins.
//
// Each repository has one commit per tag, then one more commit on the
// default branch after the last tag, so a clone of the branch is not at
// any tag: a build that follows a branch instead of its pin shows.
// Dates and identities are fixed, so commit ids are the same on every
// machine and every run.
package gitserver

import (
	"errors"
	"fmt"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labhttp"
)

// Repo is one served repository.
type Repo struct {
	Path   string   // "owner/name", served at /owner/name.git
	Branch string   // default branch
	Tags   []string // oldest first; each gets its own commit
	// Annotated makes the tags annotated (an object of their own, so the
	// tag id differs from the commit id, as for most release tags).
	Annotated bool
}

// DefaultRepos are repositories the appliance clones, at its pins.
func DefaultRepos() []Repo {
	return []Repo{
		{Path: "stackhpc/slurm-openstack-tools", Branch: "main", Tags: []string{"v2.0", "v3.0"}, Annotated: true},
		{Path: "stackhpc/ood-stackhpc-rstudio", Branch: "main", Tags: []string{"2025.08.1"}},
		{Path: "stackhpc/bc_osc_codeserver", Branch: "main", Tags: []string{"2025.09.1"}},
		{Path: "stackhpc/ood-stackhpc-matlab", Branch: "main", Tags: []string{"2025.08.1"}},
		{Path: "OSC/bc_example_jupyter", Branch: "master", Tags: []string{"v0.1.0"}},
		{Path: "lustre/lustre-release", Branch: "master", Tags: []string{"2.15.8"}, Annotated: true},
	}
}

// Options configures Start.
type Options struct {
	Addr  string // listen address; default "127.0.0.1:0"
	Dir   string // where the bare repositories are built (kept across starts). Required.
	Repos []Repo // default DefaultRepos()
	Logf  func(format string, args ...any)
}

// Server serves the repositories.
type Server struct {
	*labhttp.Server
	dir     string
	repos   []Repo
	commits map[string]string // "owner/name@ref" -> commit id
}

// buildVersion names the layout of the built repositories; a change
// rebuilds them.
const buildVersion = "3" // 3: the lustre-release stand-in tree

// Start builds missing repositories and serves them.
func Start(o Options) (*Server, error) {
	if o.Dir == "" {
		return nil, errors.New("gitserver: Options.Dir is required")
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if len(o.Repos) == 0 {
		o.Repos = DefaultRepos()
	}
	git, err := exec.LookPath("git")
	if err != nil {
		return nil, fmt.Errorf("gitserver: git is required (Debian package git): %w", err)
	}
	s := &Server{dir: filepath.Join(o.Dir, "v"+buildVersion), repos: slices.Clone(o.Repos), commits: map[string]string{}}
	for _, r := range s.repos {
		if err := s.build(git, r); err != nil {
			return nil, err
		}
	}
	backend := &cgi.Handler{
		Path: git,
		Args: []string{"http-backend"},
		Env:  []string{"GIT_PROJECT_ROOT=" + s.dir, "GIT_HTTP_EXPORT_ALL=1"},
	}
	if s.Server, err = labhttp.Start("git server", o.Addr, backend); err != nil {
		return nil, err
	}
	o.Logf("gitserver: serving %d repositories at %s", len(s.repos), s.URL())
	return s, nil
}

// fixed identity and dates make commit ids reproducible
func gitEnv(i int) []string {
	date := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(i) * 24 * time.Hour).Format(time.RFC3339)
	return append(os.Environ(),
		"GIT_AUTHOR_NAME=Lab", "GIT_AUTHOR_EMAIL=lab@example.invalid", "GIT_AUTHOR_DATE="+date,
		"GIT_COMMITTER_NAME=Lab", "GIT_COMMITTER_EMAIL=lab@example.invalid", "GIT_COMMITTER_DATE="+date,
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
}

func run(git, dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command(git, args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("gitserver: git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// build makes r's bare repository unless it is there, then records the
// commit of every tag and of the branch.
func (s *Server) build(git string, r Repo) error {
	if strings.Count(r.Path, "/") != 1 || r.Branch == "" || strings.ContainsAny(r.Path, " \\") || strings.Contains(r.Path, "..") {
		return fmt.Errorf("gitserver: invalid repo %+v", r)
	}
	bare := filepath.Join(s.dir, filepath.FromSlash(r.Path)+".git")
	if _, err := os.Stat(filepath.Join(bare, "lab-built")); err != nil {
		if err := s.create(git, r, bare); err != nil {
			return err
		}
	}
	for _, ref := range append(slices.Clone(r.Tags), r.Branch) {
		id, err := run(git, bare, gitEnv(0), "rev-parse", ref+"^{commit}")
		if err != nil {
			return err
		}
		s.commits[r.Path+"@"+ref] = id
	}
	return nil
}

func (s *Server) create(git string, r Repo, bare string) error {
	work, err := os.MkdirTemp("", "gitserver-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if _, err := run(git, work, gitEnv(0), "init", "-q", "-b", r.Branch); err != nil {
		return err
	}
	name := r.Path[strings.Index(r.Path, "/")+1:]
	write := func(f, content string) error { return os.WriteFile(filepath.Join(work, f), []byte(content), 0o644) }
	commit := func(i int, msg string) error {
		if _, err := run(git, work, gitEnv(i), "add", "-A"); err != nil {
			return err
		}
		_, err := run(git, work, gitEnv(i), "commit", "-q", "-m", msg)
		return err
	}
	for i, tag := range r.Tags {
		if err := write("README.md", fmt.Sprintf("# %s\n\nLab stand-in for github.com/%s.\n", name, r.Path)); err != nil {
			return err
		}
		if err := write("VERSION", tag+"\n"); err != nil {
			return err
		}
		for f, content := range standinFiles(r.Path) {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(work, f)), 0o755); err != nil {
				return err
			}
			if err := write(f, content); err != nil {
				return err
			}
		}
		if err := commit(i, "release "+tag); err != nil {
			return err
		}
		args := []string{"tag", tag}
		if r.Annotated {
			args = []string{"tag", "-a", "-m", "Release " + tag, tag}
		}
		if _, err := run(git, work, gitEnv(i), args...); err != nil {
			return err
		}
	}
	// unreleased work on the branch, past every tag
	if err := write("VERSION", "unreleased\n"); err != nil {
		return err
	}
	if err := commit(len(r.Tags), "work in progress after the last release"); err != nil {
		return err
	}
	tmp := bare + ".tmp"
	os.RemoveAll(tmp)
	if err := os.MkdirAll(filepath.Dir(bare), 0o755); err != nil {
		return err
	}
	if _, err := run(git, work, gitEnv(0), "clone", "-q", "--bare", work, tmp); err != nil {
		return err
	}
	// dumb-protocol clients and http-backend's info/refs want this fresh
	if _, err := run(git, tmp, gitEnv(0), "update-server-info"); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "lab-built"), nil, 0o644); err != nil {
		return err
	}
	os.RemoveAll(bare)
	return os.Rename(tmp, bare)
}

// RepoURL is the clone URL of "owner/name".
func (s *Server) RepoURL(path string) string { return s.URL() + "/" + path + ".git" }

// Commit is the commit id a tag or the branch of "owner/name" points at;
// "" if unknown.
func (s *Server) Commit(path, ref string) string { return s.commits[path+"@"+ref] }

// Repos returns the served repositories.
func (s *Server) Repos() []Repo { return slices.Clone(s.repos) }
