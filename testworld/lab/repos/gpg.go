package repos

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// keyUID is the user ID of the lab signing key.
const keyUID = "Slurm appliance lab RPM signing <lab-rpm-signing@appliance.invalid>"

// signingKey is the lab key as kept in the cache.
type signingKey struct {
	Fingerprint string
	Public      []byte // armored
	Secret      []byte // armored, unprotected
}

// loadOrCreateKey returns the key kept in dir (CacheDir/gpg), generating
// it once. The key outlives recipe changes so images built earlier keep
// trusting later repositories.
func loadOrCreateKey(dir string, logf func(string, ...any)) (*signingKey, error) {
	if k, err := readKey(dir); err == nil {
		return k, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".gpg-new-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)

	home, err := newGPGHome()
	if err != nil {
		return nil, err
	}
	defer home.close()
	if _, err := home.run(nil, "--passphrase", "", "--pinentry-mode", "loopback",
		"--quick-gen-key", keyUID, "rsa2048", "sign", "never"); err != nil {
		return nil, fmt.Errorf("generating lab GPG key: %w", err)
	}
	listing, err := home.run(nil, "--with-colons", "--list-secret-keys")
	if err != nil {
		return nil, err
	}
	fpr := ""
	for _, line := range strings.Split(string(listing), "\n") {
		if f := strings.Split(line, ":"); len(f) > 9 && f[0] == "fpr" {
			fpr = f[9]
			break
		}
	}
	if fpr == "" {
		return nil, errors.New("generated GPG key has no fingerprint")
	}
	pub, err := home.run(nil, "--armor", "--export", fpr)
	if err != nil {
		return nil, err
	}
	sec, err := home.run(nil, "--passphrase", "", "--pinentry-mode", "loopback", "--armor", "--export-secret-keys", fpr)
	if err != nil {
		return nil, err
	}
	for name, data := range map[string][]byte{"fingerprint": []byte(fpr + "\n"), "public.asc": pub, "secret.asc": sec} {
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o600); err != nil {
			return nil, err
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Someone else won the race: use theirs.
		if k, err2 := readKey(dir); err2 == nil {
			return k, nil
		}
		return nil, err
	}
	logf("repos: generated lab GPG key %s", fpr)
	return readKey(dir)
}

func readKey(dir string) (*signingKey, error) {
	fpr, err := os.ReadFile(filepath.Join(dir, "fingerprint"))
	if err != nil {
		return nil, err
	}
	pub, err := os.ReadFile(filepath.Join(dir, "public.asc"))
	if err != nil {
		return nil, err
	}
	sec, err := os.ReadFile(filepath.Join(dir, "secret.asc"))
	if err != nil {
		return nil, err
	}
	k := &signingKey{Fingerprint: strings.TrimSpace(string(fpr)), Public: pub, Secret: sec}
	if k.Fingerprint == "" || !bytes.Contains(pub, []byte("BEGIN PGP PUBLIC KEY BLOCK")) {
		return nil, errors.New("incomplete key")
	}
	return k, nil
}

// gpgHome is a throw-away GNUPGHOME with a short path (the agent's socket
// path must stay under ~100 bytes, which a deep cache directory may not).
type gpgHome struct{ dir string }

func newGPGHome() (*gpgHome, error) {
	dir, err := os.MkdirTemp("", "labgpg")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &gpgHome{dir: dir}, nil
}

func (h *gpgHome) env() []string { return append(os.Environ(), "GNUPGHOME="+h.dir) }

func (h *gpgHome) run(stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.Command("gpg", append([]string{"--batch", "--homedir", h.dir}, args...)...)
	cmd.Env = h.env()
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("gpg %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// close stops the agent started for this home and removes it.
func (h *gpgHome) close() {
	cmd := exec.Command("gpgconf", "--homedir", h.dir, "--kill", "gpg-agent")
	cmd.Env = h.env()
	_ = cmd.Run()
	os.RemoveAll(h.dir)
}

// sign adds key's signature to the RPM files (the key imported into h).
func (h *gpgHome) sign(key *signingKey, files []string) error {
	args := []string{
		"--define", "__gpg /usr/bin/gpg",
		"--define", "_gpg_path " + h.dir,
		"--define", "_gpg_name " + key.Fingerprint,
		"--addsign",
	}
	cmd := exec.Command("rpmsign", append(args, files...)...)
	cmd.Env = append(h.env(), "HOME="+h.dir) // keep rpm away from ~/.rpmdb
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("rpmsign: %v: %s", err, out)
	}
	return nil
}

// signAll signs each group of RPM files with key, groups in parallel, in
// a throwaway GnuPG home holding the key.
func signAll(key *signingKey, groups [][]string) error {
	home, err := newGPGHome()
	if err != nil {
		return err
	}
	defer home.close()
	if _, err := home.run(key.Secret, "--import"); err != nil {
		return fmt.Errorf("importing lab key: %w", err)
	}
	return parallel(len(groups), func(i int) error { return home.sign(key, groups[i]) })
}
