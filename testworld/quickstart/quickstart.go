// Package quickstart replays the README's user path as a site engineer
// follows it: the plugin installed the way the README says, the README's
// template and site variables, and each of the README's packer commands
// run as written, in the shell of a site whose appliance environment is
// activated. testworld/badinput runs it up to `packer validate` with no
// network; testworld/e2e runs it whole on the lab.
package quickstart

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
)

// Path is the README's user path.
type Path struct {
	Install  string   // the command installing a local build
	Template string   // site.pkr.hcl
	Vars     string   // site.pkrvars.hcl, as the README shows it
	Commands []string // the packer commands, in order
}

// fence is a fenced block of a language, not indented.
func fence(lang string) *regexp.Regexp {
	return regexp.MustCompile("(?ms)^```" + lang + "\n(.*?)^```$")
}

// section is the text under a "## " heading starting with title, up to the
// next "## " heading.
func section(t testing.TB, page, title string) string {
	t.Helper()
	i := strings.Index(page, "\n## "+title)
	if i < 0 {
		t.Fatalf("README: no section %q", title)
	}
	rest := page[i+1:]
	if j := strings.Index(rest[3:], "\n## "); j >= 0 {
		rest = rest[:j+3]
	}
	return rest
}

// commands are a sh block's command lines, without comments.
func commands(block string) []string {
	var out []string
	for _, l := range strings.Split(block, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// Read takes the user path from the README.
func Read(t testing.TB) Path {
	t.Helper()
	root, err := packertest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	var p Path
	for _, c := range commands(strings.Join(blocks(section(t, page, "Install"), "sh"), "\n")) {
		if strings.Contains(c, "plugins install --path") {
			p.Install = c
		}
	}
	start := section(t, page, "Quick start")
	hcl := blocks(start, "hcl")
	sh := blocks(start, "sh")
	if p.Install == "" || len(hcl) != 2 || len(sh) != 1 {
		t.Fatalf("README: want an install command (got %q), the quick start's template and variables (%d HCL blocks) and its commands (%d sh blocks)", p.Install, len(hcl), len(sh))
	}
	p.Template, p.Vars, p.Commands = hcl[0], hcl[1], commands(sh[0])
	if len(p.Commands) < 3 {
		t.Fatalf("README: the quick start's commands are %q; want init, validate and build", p.Commands)
	}
	return p
}

func blocks(text, lang string) []string {
	var out []string
	for _, m := range fence(lang).FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// Lay writes the README's template as site.pkr.hcl into dir and vars as
// site.pkrvars.hcl (the README's own, or a site's), and makes the site
// the README's commands run in: a private tree of the real appliance
// (appliancesite) with its overrides environment, its pins file the
// lab's (example/'s) where the appliance keeps it. It returns the
// environment the site's activate gives (APPLIANCES_REPO_ROOT,
// APPLIANCES_ENVIRONMENT_ROOT) and, as PKR_VAR_ variables, where the
// shared Galaxy roles and collections are.
func (p Path) Lay(t testing.TB, dir, vars string) []string {
	t.Helper()
	root, err := packertest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	site := appliancesite.New(t, appliancesite.Overrides)
	pins, err := os.ReadFile(filepath.Join(root, "example", "dnf_repo_timestamps.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		own(t, site.Repo, "environments/common/inventory/group_vars/all/dnf_repo_timestamps.yml"): string(pins),
		filepath.Join(dir, "site.pkr.hcl"):     p.Template,
		filepath.Join(dir, "site.pkrvars.hcl"): vars,
	} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return []string{"APPLIANCES_REPO_ROOT=" + site.Repo, "APPLIANCES_ENVIRONMENT_ROOT=" + site.Environment,
		fmt.Sprintf("PKR_VAR_appliance_roles_path=[%q]", site.RolesPath[0]),
		"PKR_VAR_appliance_collections_path=" + hclList(site.CollectionsPath)}
}

// own makes rel, under the private tree root, a path of the tree's own:
// each linked directory on the way becomes a directory of links to its
// entries, and a linked file at rel is removed, so that writing there
// leaves the shared checkout untouched.
func own(t testing.TB, root, rel string) string {
	t.Helper()
	cur := root
	parts := strings.Split(rel, "/")
	for _, part := range parts[:len(parts)-1] {
		cur = filepath.Join(cur, part)
		target, err := os.Readlink(cur)
		if err != nil {
			continue // a directory of the tree's own, or none yet
		}
		entries, err := os.ReadDir(target)
		if err == nil {
			err = os.Remove(cur)
		}
		if err == nil {
			err = os.Mkdir(cur, 0o755)
		}
		for _, e := range entries {
			if err == nil {
				err = os.Symlink(filepath.Join(target, e.Name()), filepath.Join(cur, e.Name()))
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(root, rel)
	if err := os.Remove(file); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return file
}

// InstallRelease builds the plugin as the release workflow does (no
// pre-release in its version, so `packer init` finds the README's
// constraint met and downloads nothing) and runs the README's install
// command on it in dir. It returns the environment every later command
// needs: the plugin directory the install wrote.
func (p Path) InstallRelease(t testing.TB, pk *packertest.Packer, dir string, env []string) []string {
	t.Helper()
	root, err := packertest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "packer-plugin-fatimage"),
		"-ldflags", "-X github.com/stackhpc/packer-plugin-fatimage/version.VersionPrerelease=", ".")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the plugin as a release: %v\n%s", err, out)
	}
	home := t.TempDir()
	env = append(append([]string(nil), env...),
		"PACKER_PLUGIN_PATH="+filepath.Join(home, "plugins"), "PACKER_CONFIG_DIR="+filepath.Join(home, "config"))
	if r := Run(t, pk, dir, env, p.Install); r.ExitCode != 0 {
		t.Fatalf("%s: exit %d\n%s", p.Install, r.ExitCode, r.Output())
	}
	return env
}

// Run runs one command line of the README with bash in dir, the packer
// binary first on PATH and env on top of packertest's environment.
func Run(t testing.TB, pk *packertest.Packer, dir string, env []string, line string) packertest.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	cmd := pk.Command(ctx, dir, append(env, "PATH="+filepath.Dir(pk.Bin)+":"+os.Getenv("PATH")))
	cmd.Path, cmd.Args = bash, []string{"bash", "-c", line}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	r := packertest.Result{Args: cmd.Args, Stdout: stdout.String(), Stderr: stderr.String()}
	if err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("%s: %v", line, err)
		}
		r.ExitCode = exit.ExitCode()
	}
	return r
}

// hclList is paths as an HCL list.
func hclList(paths []string) string {
	var q []string
	for _, p := range paths {
		q = append(q, strconv.Quote(p))
	}
	return "[" + strings.Join(q, ", ") + "]"
}
