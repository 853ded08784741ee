// Package quickstart replays the README's user path as a site engineer
// follows it: the plugin installed the way the README says, the README's
// template and site variables beside an appliance checkout, and each of
// the README's packer commands run as written. testworld/badinput runs it
// up to `packer validate` with no network; testworld/e2e runs it whole on
// the lab.
package quickstart

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
)

// CheckoutName is where the README's template looks for the appliance
// checkout (its appliance_dir default), relative to the template.
const CheckoutName = "ansible-slurm-appliance"

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

// Lay writes the README's template as site.pkr.hcl into dir, vars as
// site.pkrvars.hcl (the README's own, or a site's), and an appliance
// checkout beside them: testworld/appliance with its environment
// "fatsite" also under env (the README's variables name "mysite"), and the
// pins file where the appliance keeps it (example/'s, the lab's
// repositories).
func (p Path) Lay(t testing.TB, dir, vars, env string) {
	t.Helper()
	root, err := packertest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	checkout := filepath.Join(dir, CheckoutName)
	if err := os.CopyFS(checkout, os.DirFS(filepath.Join(root, "testworld", "appliance"))); err != nil {
		t.Fatal(err)
	}
	envs := filepath.Join(checkout, "environments")
	if err := os.CopyFS(filepath.Join(envs, env), os.DirFS(filepath.Join(envs, "fatsite"))); err != nil {
		t.Fatal(err)
	}
	pins, err := os.ReadFile(filepath.Join(root, "example", "dnf_repo_timestamps.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		filepath.Join(envs, "common", "inventory", "group_vars", "all", "dnf_repo_timestamps.yml"): string(pins),
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
