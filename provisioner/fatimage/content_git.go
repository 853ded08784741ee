//go:generate packer-sdc struct-markdown

package fatimage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/fetch"
	"github.com/stackhpc/packer-plugin-fatimage/internal/safepath"
)

// GitCheckout is a git repository checked out at a pinned tag or commit.
// The fetch and the check of the pin happen before any package work; the
// checkout (with its .git, origin set to repo) is put in place after.
type GitCheckout struct {
	// Repository URL (http or https), e.g.
	// https://github.com/stackhpc/slurm-openstack-tools.git.
	Repo string `mapstructure:"repo" required:"true"`
	// Tag to check out, e.g. v3.0.
	Tag string `mapstructure:"tag"`
	// Commit (40 hex digits) to check out; with `tag`, the commit the tag
	// must point at (the build fails if it does not).
	Commit string `mapstructure:"commit"`
	// Branch to check out. Not reproducible: the build warns and records
	// the commit it got.
	Branch string `mapstructure:"branch"`
	// Absolute directory of the checkout; replaced when not already a
	// clean checkout of the commit.
	Destination string `mapstructure:"destination" required:"true"`
	// Owner as user or user:group. Default root:root.
	Owner string `mapstructure:"owner"`
}

var reCommit = regexp.MustCompile(`^[0-9a-f]{40}$`)

// ref is what the checkout follows, for messages and image.json.
func (g GitCheckout) ref() string {
	switch {
	case g.Tag != "":
		return g.Tag
	case g.Branch != "":
		return g.Branch
	}
	return g.Commit
}

// rev is the revision the fetched repository resolves: refs are fetched
// as refs/tags/* and refs/remotes/origin/*.
func (g GitCheckout) rev() string {
	switch {
	case g.Tag != "":
		return "refs/tags/" + g.Tag
	case g.Branch != "":
		return "refs/remotes/origin/" + g.Branch
	}
	return g.Commit
}

// validRefName is a conservative git ref name check.
func validRefName(s string) bool {
	return s != "" && !strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "/") && !strings.HasSuffix(s, "/") &&
		!strings.HasSuffix(s, ".lock") && !strings.Contains(s, "..") && !strings.Contains(s, "@{") &&
		!strings.ContainsAny(s, " ~^:?*[\\\n\r\t")
}

func validateGitCheckouts(gs []GitCheckout) []error {
	var errs []error
	for i, g := range gs {
		add := itemErrs(&errs, "git_checkouts", i)
		if msg := checkHTTPURL("repo", g.Repo); msg != "" {
			add("%s", msg)
		}
		n := 0
		for _, s := range []string{g.Tag, g.Branch} {
			if s != "" {
				n++
			}
		}
		switch {
		case n == 0 && g.Commit == "":
			add("one of tag, commit or branch is required")
		case n > 1:
			add("tag and branch exclude each other")
		case g.Branch != "" && g.Commit != "":
			add("commit pins a tag, not a branch; pin the commit alone instead of the branch")
		}
		if g.Tag != "" && !validRefName(g.Tag) {
			add("tag %q is not a valid git ref name", g.Tag)
		}
		if g.Branch != "" && !validRefName(g.Branch) {
			add("branch %q is not a valid git ref name", g.Branch)
		}
		if g.Commit != "" && !reCommit.MatchString(g.Commit) {
			add("commit %q must be a full commit id (40 lowercase hex digits)", g.Commit)
		}
		if msg := safepath.Dest(g.Destination, false); msg != "" {
			add("destination %q %s (a checkout replaces what is there)", g.Destination, msg)
		}
		if !validOwner(g.Owner) {
			add("owner %q must be user or user:group", g.Owner)
		}
	}
	return errs
}

// gitWarnings flag checkouts that follow a branch.
func gitWarnings(gs []GitCheckout) []string {
	var out []string
	for i, g := range gs {
		if g.Branch != "" {
			out = append(out, fmt.Sprintf("git_checkouts[%d]: branch %s of %s is not reproducible: not pinned, the commit it gives is not verified (recorded in image.json); pin a tag or commit", i, g.Branch, g.Repo))
		}
	}
	return out
}

// gitStaging is where checkout i is fetched in the work dir.
func gitStaging(workDir string, i int) string { return path.Join(workDir, fmt.Sprintf("git-%d", i)) }

// fetchGit adds the fetch and check of every checkout to s: from the
// repository (vm) or from a bundle the plugin made and uploaded (host).
func (s *state) fetchGit(ctx context.Context, sc *vmScript) error {
	c, p := s.cfg, s.plan
	for i, g := range p.GitCheckouts {
		what := fmt.Sprintf("git_checkouts[%d]", i)
		src := g.Repo
		if c.contentSource() == "host" {
			src = path.Join(s.workDir, fmt.Sprintf("git-%d.bundle", i))
			if err := s.uploadGitBundle(ctx, what, g, src); err != nil {
				return err
			}
		}
		sc.use("git").call("fatimage_git_fetch", what, src, g.rev(), g.Commit, gitStaging(s.workDir, i))
		if src != g.Repo {
			sc.call("rm", "-f", src)
		}
	}
	return nil
}

// parseGitCommits reads the "fatimage-git-commit <what> <id>" lines.
func parseGitCommits(out string, n int) []string {
	return parseReports(out, "fatimage-git-commit", "git_checkouts", n, reCommit.MatchString)
}

// scriptInstallGit puts each fetched checkout in place at its commit.
func scriptInstallGit(gs []GitCheckout, commits []string, workDir string) *vmScript {
	sc := newScript("git")
	for i, g := range gs {
		u, grp := splitOwner(g.Owner)
		sc.call("fatimage_git_install", fmt.Sprintf("git_checkouts[%d]", i), gitStaging(workDir, i), commits[i], g.Destination, g.Repo, u, grp)
	}
	return sc
}

// uploadGitBundle mirrors the repository into the host cache (one mirror
// per URL, updated on each use), checks the pin there so a wrong one
// fails before anything is uploaded, and uploads a bundle of it to dst.
func (s *state) uploadGitBundle(ctx context.Context, what string, g GitCheckout, dst string) error {
	root, err := fetch.CacheDir()
	if err != nil {
		return fmt.Errorf("%s: cache: %w", what, err)
	}
	h := sha256.Sum256([]byte(g.Repo))
	mirror := filepath.Join(filepath.Dir(root), "git", hex.EncodeToString(h[:8])+".git")
	gitCmd := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("%s: git %s: %v: %s", what, args[0], err, strings.TrimSpace(string(out)))
		}
		return strings.TrimSpace(string(out)), nil
	}
	if _, err := os.Stat(mirror); err != nil {
		s.ui.Say(fmt.Sprintf("fatimage: cloning %s on the host", g.Repo))
		if err := os.MkdirAll(filepath.Dir(mirror), 0o755); err != nil {
			return fmt.Errorf("%s: cache: %w", what, err)
		}
		tmp := mirror + ".tmp"
		_ = os.RemoveAll(tmp)
		if _, err := gitCmd("clone", "-q", "--mirror", g.Repo, tmp); err != nil {
			return err
		}
		if err := os.Rename(tmp, mirror); err != nil {
			return fmt.Errorf("%s: cache: %w", what, err)
		}
	} else {
		s.ui.Say(fmt.Sprintf("fatimage: updating the host's mirror of %s", g.Repo))
		if _, err := gitCmd("-C", mirror, "remote", "update", "--prune"); err != nil {
			return err
		}
	}
	// the mirror has refs/heads/* where the VM expects refs/remotes/origin/*
	rev := strings.Replace(g.rev(), "refs/remotes/origin/", "refs/heads/", 1)
	got, err := gitCmd("-C", mirror, "rev-parse", "-q", "--verify", rev+"^{commit}")
	if err != nil {
		return fmt.Errorf("%s: %s is not in %s", what, g.ref(), g.Repo)
	}
	if g.Commit != "" && got != g.Commit {
		return fmt.Errorf("%s: %s is at commit %s, want %s; nothing installed", what, g.ref(), got, g.Commit)
	}
	bundle, err := os.CreateTemp("", "fatimage-*.bundle")
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	_ = bundle.Close()
	defer os.Remove(bundle.Name())
	if _, err := gitCmd("-C", mirror, "bundle", "create", "-q", bundle.Name(), "--branches", "--tags"); err != nil {
		return err
	}
	f, err := os.Open(bundle.Name())
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer f.Close()
	if err := s.comm.Upload(dst, f, nil); err != nil {
		return fmt.Errorf("%s: uploading the bundle: %w", what, err)
	}
	return nil
}
