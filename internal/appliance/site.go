package appliance

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// HostAlias is the build VM's inventory name: Packer's ansible provisioner
// calls it "default" unless told otherwise, and the appliance's template
// does not tell it otherwise (inventory_hostname appears in its values).
const HostAlias = "default"

// Site is an appliance checkout and one of its environments, as a site's
// deploy host has them after sourcing the environment's `activate`.
type Site struct {
	// Repo is the checkout's root (APPLIANCES_REPO_ROOT).
	Repo string
	// Environment is the environment directory (APPLIANCES_ENVIRONMENT_ROOT).
	Environment string
	// Groups are the build's inventory groups besides `builder` (the
	// template's inventory_groups, split at commas).
	Groups []string
	// RolesPath and CollectionsPath are searched after the paths the
	// environment's ansible.cfg names: where the site installed its Galaxy
	// roles and collections if not there.
	RolesPath, CollectionsPath []string
	// AnsibleDir holds ansible-playbook; empty means the checkout's venv
	// (venv/bin) when it has one, else PATH.
	AnsibleDir string
}

// ParseGroups splits the appliance template's inventory_groups value.
func ParseGroups(s string) []string {
	var out []string
	for _, g := range strings.Split(s, ",") {
		if g = strings.TrimSpace(g); g != "" {
			out = append(out, g)
		}
	}
	return out
}

var groupName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Check says what is missing for the site to be read: the checkout's
// build files, the environment, the group names. No command runs.
func (s *Site) Check() error {
	var errs []error
	for _, f := range []string{"packer/ansible-inventory.sh", "packer/openhpc_extravars.yml", "ansible/fatimage.yml"} {
		if _, err := os.Stat(filepath.Join(s.Repo, f)); err != nil {
			errs = append(errs, fmt.Errorf("appliance checkout %s: %s: %w", s.Repo, f, err))
		}
	}
	if st, err := os.Stat(filepath.Join(s.Environment, "inventory")); err != nil || !st.IsDir() {
		errs = append(errs, fmt.Errorf("environment %s: no inventory directory", s.Environment))
	}
	if _, err := os.Stat(s.config()); err != nil {
		errs = append(errs, fmt.Errorf("environment %s: no ansible.cfg: its inventory setting is what composes the common, site and environment inventories", s.Environment))
	}
	for _, g := range s.Groups {
		if !groupName.MatchString(g) {
			errs = append(errs, fmt.Errorf("inventory group %q: not a valid Ansible group name", g))
		}
	}
	return errors.Join(errs...)
}

// config is the environment's ansible.cfg, which `activate` exports as
// ANSIBLE_CONFIG.
func (s *Site) config() string { return filepath.Join(s.Environment, "ansible.cfg") }

// Commit is the checkout's git commit, or "" with the reason when the
// checkout is not a git work tree (a copied tree has no history).
func (s *Site) Commit(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, "git", "-C", s.Repo, "rev-parse", "HEAD")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("appliance checkout %s: git rev-parse HEAD: %w (not a git work tree?)", s.Repo, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// command is the site's ansible tool of that name.
func (s *Site) command(name string) string {
	dir := s.AnsibleDir
	if dir == "" {
		venv := filepath.Join(s.Repo, "venv", "bin")
		if _, err := os.Stat(filepath.Join(venv, name)); err == nil {
			dir = venv
		}
	}
	if dir == "" {
		return name
	}
	return filepath.Join(dir, name)
}

// env is the process environment of an ansible run: the caller's, with
// what the environment's `activate` exports, and the extra role and
// collection paths after those of the environment's ansible.cfg.
func (s *Site) env() ([]string, error) {
	env := append(os.Environ(),
		"APPLIANCES_REPO_ROOT="+s.Repo,
		"APPLIANCES_ENVIRONMENT_ROOT="+s.Environment,
		"ANSIBLE_CONFIG="+s.config(),
		// A fresh VM's host key is unknown; Packer's own SSH does not check it either.
		"ANSIBLE_HOST_KEY_CHECKING=False",
	)
	if len(s.RolesPath)+len(s.CollectionsPath) == 0 {
		return env, nil
	}
	cfg, err := readPaths(s.config())
	if err != nil {
		return nil, err
	}
	if len(s.RolesPath) > 0 {
		env = append(env, "ANSIBLE_ROLES_PATH="+strings.Join(append(cfg["roles_path"], s.RolesPath...), ":"))
	}
	if len(s.CollectionsPath) > 0 {
		env = append(env, "ANSIBLE_COLLECTIONS_PATH="+strings.Join(append(cfg["collections_path"], s.CollectionsPath...), ":"))
	}
	return env, nil
}

// readPaths reads roles_path and collections_path from an ansible.cfg's
// [defaults], relative entries resolved against the file's directory as
// Ansible resolves them; a missing key gets Ansible's default.
func readPaths(cfgFile string) (map[string][]string, error) {
	defaults, err := readDefaults(cfgFile)
	if err != nil {
		return nil, err
	}
	home, _ := os.UserHomeDir()
	out := map[string][]string{
		"roles_path":       {filepath.Join(home, ".ansible/roles"), "/usr/share/ansible/roles", "/etc/ansible/roles"},
		"collections_path": {filepath.Join(home, ".ansible/collections"), "/usr/share/ansible/collections"},
	}
	if v, ok := defaults["collections_paths"]; ok {
		defaults["collections_path"] = v
	}
	for _, key := range []string{"roles_path", "collections_path"} {
		val, ok := defaults[key]
		if !ok {
			continue
		}
		var paths []string
		for _, p := range strings.Split(val, ":") {
			if strings.HasPrefix(p, "~/") {
				p = filepath.Join(home, p[2:])
			}
			if p != "" && !filepath.IsAbs(p) {
				p = filepath.Join(filepath.Dir(cfgFile), p)
			}
			if p != "" {
				paths = append(paths, filepath.Clean(p))
			}
		}
		out[key] = paths
	}
	return out, nil
}

// readDefaults reads the keys of an ansible.cfg's [defaults] section.
func readDefaults(cfgFile string) (map[string]string, error) {
	f, err := os.Open(cfgFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			section = strings.Trim(line, "[]")
			continue
		}
		if key, val, ok := strings.Cut(line, "="); ok && section == "defaults" {
			out[strings.TrimSpace(key)] = strings.TrimSpace(val)
		}
	}
	return out, sc.Err()
}

// FindRole is the directory Ansible would load role name from for this
// site: the first of the environment's roles_path and then RolesPath that
// has it; "" when none has.
func (s *Site) FindRole(name string) (string, error) {
	paths, err := s.RolesSearchPath()
	if err != nil {
		return "", err
	}
	for _, d := range paths {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return p, nil
		}
	}
	return "", nil
}

// RolesSearchPath are the directories roles are looked for in, in order:
// the environment's roles_path, then RolesPath.
func (s *Site) RolesSearchPath() ([]string, error) {
	cfg, err := readPaths(s.config())
	if err != nil {
		return nil, err
	}
	return append(cfg["roles_path"], s.RolesPath...), nil
}
