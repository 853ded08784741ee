package git

import (
	"context"
	_ "embed"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
	"github.com/stackhpc/packer-plugin-fatimage/internal/safepath"
)

// Kind is the git_checkouts kind.
type Kind struct{}

var (
	_ content.Kind[GitCheckout]     = Kind{}
	_ content.Fetcher[GitCheckout]  = Kind{}
	_ content.Recorder[GitCheckout] = Kind{}
)

var reCommit = regexp.MustCompile(`^[0-9a-f]{40}$`)

//go:embed git.sh
var shell string

// Option implements content.Kind.
func (Kind) Option() string { return "git_checkouts" }

// ID is the destination: a template entry for it replaces a group's.
func (Kind) ID(g GitCheckout) string { return "destination " + g.Destination }

// Shell implements content.Kind: git.sh.
func (Kind) Shell() string { return shell }

// Ref is what the checkout follows, for messages and image.json.
func (g GitCheckout) Ref() string {
	switch {
	case g.Tag != "":
		return g.Tag
	case g.Branch != "":
		return g.Branch
	}
	return g.Commit
}

// Rev is the revision the fetched repository resolves: refs are fetched
// as refs/tags/* and refs/remotes/origin/*.
func (g GitCheckout) Rev() string {
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

// Validate checks the checkouts without network or VM.
func (Kind) Validate(gs []GitCheckout) []error {
	var errs []error
	for i, g := range gs {
		add := content.ItemErrs(&errs, "git_checkouts", i)
		if msg := content.CheckURL("repo", g.Repo); msg != "" {
			add("%s", msg)
		}
		checkPin(g, add)
		if msg := safepath.Dest(g.Destination, false); msg != "" {
			add("destination %q %s (a checkout replaces what is there)", g.Destination, msg)
		}
		if !content.ValidOwner(g.Owner) {
			add("owner %q must be user or user:group", g.Owner)
		}
	}
	return errs
}

// checkPin checks what the checkout follows: one of tag, commit or
// branch, a commit only to pin a tag, and valid names.
func checkPin(g GitCheckout, add func(string, ...any)) {
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
}

// Staging is where checkout i is fetched in the work dir.
func Staging(workDir string, i int) string { return path.Join(workDir, fmt.Sprintf("git-%d", i)) }

// Fetch fetches and checks every checkout: from the repository (vm) or
// from a bundle of the host's mirror, the pin checked there first
// (host). A branch is warned about: not reproducible.
func (Kind) Fetch(ctx context.Context, env content.Env, gs []GitCheckout) (content.Fetch, error) {
	f := content.Fetch{Check: func(out string) error {
		return content.RequireReports(ParseCommits(out, len(gs)), "git_checkouts", "the fetch did not report a commit")
	}}
	for i, g := range gs {
		what := fmt.Sprintf("git_checkouts[%d]", i)
		u, grp := content.SplitOwner(g.Owner)
		f.Owners = append(f.Owners, content.Owner{What: what, User: u, Group: grp})
		if g.Branch != "" {
			f.Warnings = append(f.Warnings, fmt.Sprintf("git_checkouts[%d]: branch %s of %s is not reproducible: not pinned, the commit it gives is not verified (recorded in image.json); pin a tag or commit", i, g.Branch, g.Repo))
		}
		src := g.Repo
		if env.Source == "host" {
			src = path.Join(env.WorkDir, fmt.Sprintf("git-%d.bundle", i))
			bundle, err := hostBundle(ctx, env.Say, what, g)
			if err != nil {
				content.RemoveUploads(f.Uploads)
				return content.Fetch{}, err
			}
			f.Uploads = append(f.Uploads, content.Upload{What: what, Path: bundle, Dst: src, Remove: true})
		}
		f.Script.Call("fatimage_git_fetch", what, src, g.Rev(), g.Commit, Staging(env.WorkDir, i))
		if src != g.Repo {
			f.Script.Call("rm", "-f", src)
		}
	}
	return f, nil
}

// ParseCommits reads the "fatimage-git-commit <what> <id>" lines of n
// checkouts.
func ParseCommits(out string, n int) []string {
	return content.Reports(out, "fatimage-git-commit", "git_checkouts", n, reCommit.MatchString)
}

// Install puts each fetched checkout in place at the commit its fetch
// reported.
func (Kind) Install(env content.Env, gs []GitCheckout) (content.Script, error) {
	var sc content.Script
	commits := ParseCommits(env.Fetched, len(gs))
	if err := content.RequireReports(commits, "git_checkouts", "the fetch did not report a commit"); err != nil {
		return sc, err
	}
	for i, g := range gs {
		u, grp := content.SplitOwner(g.Owner)
		sc.Call("fatimage_git_install", fmt.Sprintf("git_checkouts[%d]", i), Staging(env.WorkDir, i), commits[i], g.Destination, g.Repo, u, grp)
	}
	return sc, nil
}

// Record is a checkout in image.json.
type Record struct {
	Repo   string `json:"repo"`
	Ref    string `json:"ref"`
	Commit string `json:"commit"`
}

// Record is image.json's git, by destination, with the commit each
// checkout's fetch reported.
func (Kind) Record(env content.Env, gs []GitCheckout) (map[string]any, error) {
	if len(gs) == 0 {
		return nil, nil
	}
	commits := ParseCommits(env.Fetched, len(gs))
	r := map[string]Record{}
	for i, g := range gs {
		r[g.Destination] = Record{Repo: g.Repo, Ref: g.Ref(), Commit: commits[i]}
	}
	return map[string]any{"git": r}, nil
}
