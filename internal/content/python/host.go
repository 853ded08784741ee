package python

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
)

// downloadWheels runs pip download on the host (wheels only, so nothing
// is built) into a temporary directory.
func downloadWheels(ctx context.Context, say func(string), what string, e PythonEnv, req string) ([]content.Staged, error) {
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
	say(fmt.Sprintf("%s: pip download on the host from %s", what, e.indexURL()))
	cmd := exec.CommandContext(ctx, "python3", args...)
	cmd.Env = append(os.Environ(), "PIP_CONFIG_FILE=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%s: pip download on the host: %v; nothing installed\n%s", what, err, content.Tail(string(out), 20))
	}
	entries, err := os.ReadDir(filepath.Join(dir, "wheels"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var out []content.Staged
	for _, en := range entries {
		data, err := os.ReadFile(filepath.Join(dir, "wheels", en.Name()))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, content.Staged{Name: en.Name(), Data: data})
	}
	return out, nil
}
