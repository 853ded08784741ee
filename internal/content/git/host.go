package git

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/fetch"
)

// hostBundle mirrors the repository into the host cache (one mirror per
// URL, next to internal/fetch's cache, updated on each use), checks the
// pin there so a wrong one fails before anything is uploaded, and
// returns a temporary bundle of it for the VM.
func hostBundle(ctx context.Context, say func(string), what string, g GitCheckout) (string, error) {
	root, err := fetch.CacheDir()
	if err != nil {
		return "", fmt.Errorf("%s: cache: %w", what, err)
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
	if err := updateMirror(say, what, g.Repo, mirror, gitCmd); err != nil {
		return "", err
	}
	// the mirror has refs/heads/* where the VM expects refs/remotes/origin/*
	rev := strings.Replace(g.Rev(), "refs/remotes/origin/", "refs/heads/", 1)
	got, err := gitCmd("-C", mirror, "rev-parse", "-q", "--verify", rev+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("%s: %s is not in %s", what, g.Ref(), g.Repo)
	}
	if g.Commit != "" && got != g.Commit {
		return "", fmt.Errorf("%s: %s is at commit %s, want %s; nothing installed", what, g.Ref(), got, g.Commit)
	}
	bundle, err := os.CreateTemp("", "fatimage-*.bundle")
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	_ = bundle.Close()
	if _, err := gitCmd("-C", mirror, "bundle", "create", "-q", bundle.Name(), "--branches", "--tags"); err != nil {
		_ = os.Remove(bundle.Name())
		return "", err
	}
	return bundle.Name(), nil
}

// updateMirror clones repo into mirror, or updates the mirror there.
func updateMirror(say func(string), what, repo, mirror string, gitCmd func(...string) (string, error)) error {
	if _, err := os.Stat(mirror); err == nil {
		say(fmt.Sprintf("updating the host's mirror of %s", repo))
		_, err := gitCmd("-C", mirror, "remote", "update", "--prune")
		return err
	}
	say(fmt.Sprintf("cloning %s on the host", repo))
	if err := os.MkdirAll(filepath.Dir(mirror), 0o755); err != nil {
		return fmt.Errorf("%s: cache: %w", what, err)
	}
	tmp := mirror + ".tmp"
	_ = os.RemoveAll(tmp)
	if _, err := gitCmd("clone", "-q", "--mirror", repo, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, mirror); err != nil {
		return fmt.Errorf("%s: cache: %w", what, err)
	}
	return nil
}
