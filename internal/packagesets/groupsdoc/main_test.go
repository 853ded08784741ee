package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/packagesets"
)

var page = filepath.Join("..", "..", "..", "docs", "provisioners", "fatimage-groups.md")

// The committed page is what the generator makes of the shipped data, so
// a change to package_sets.yaml without `make generate` fails here (and
// CI's clean-tree check after `make generate`).
func TestPageIsGenerated(t *testing.T) {
	want, err := render(packagesets.Source())
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s is not what internal/packagesets/groupsdoc makes of package_sets.yaml: run `make generate`", page)
	}
}

// Every group the plugin knows has its section, holding every value of
// its set as the plugin reads it (each line of a multi-line value), so
// the page drops nothing; every built-in user's and binary's pins are there.
func TestPageShowsEveryValue(t *testing.T) {
	doc, err := render(packagesets.Source())
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	groups := 0
	for _, name := range packagesets.Known() {
		if packagesets.IsExpansion(name) {
			if !strings.Contains(text, "| `"+name+"` |") {
				t.Errorf("expansion %s is not in the expansions table", name)
			}
			continue
		}
		groups++
		sec := section(text, name)
		if sec == "" {
			t.Errorf("group %s has no section", name)
			continue
		}
		set, err := packagesets.Expand(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range leaves(set[0].Set) {
			if !strings.Contains(sec, v) {
				t.Errorf("group %s: the section lacks %q", name, v)
			}
		}
	}
	if groups < 40 {
		t.Fatalf("%d groups checked; the table has more than 40", groups)
	}
	for _, u := range []string{"slurm", "podman", "grafana"} {
		usr, _ := packagesets.LookupUser(u)
		if !strings.Contains(text, "| `"+u+"` | "+itoa(usr.UID)+" |") {
			t.Errorf("user %s's uid %d is not in the users table", u, usr.UID)
		}
	}
	for _, b := range []string{"node_exporter", "prometheus", "alertmanager"} {
		bin, _ := packagesets.LookupBinary(b)
		if !strings.Contains(text, "| `"+b+"` | "+bin.Version+" |") || !strings.Contains(text, bin.SHA256) {
			t.Errorf("binary %s's version %s or sha256 is not in the binaries table", b, bin.Version)
		}
	}
}

// The page's forms, on a small table: notes from comments (escaped),
// el<N> packages, conditional sets, users with IDs, placeholders read,
// multi-line values as code blocks inside their item.
func TestRenderForms(t *testing.T) {
	src := `expands:
  all: [a, b]
groups:
  # a's note: <x> and DS_*
  a:
    packages: [p1, "el8:p8"]
    users: [u]
    with_option:
      opt:
        packages: [p2]
  b:
    content:
      files:
        - {destination: /etc/x, content: "l1\nl2\n", mode: "0600"}
        - {source: "{{appliance_dir}}/f", destination: /etc/f}
      python_envs:
        - {path: /opt/v, index_url: "{{python_index_url}}", requirements: [x==1]}
users:
  u: {uid: 5, gid: 6}
binaries: {}
`
	out, err := render([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	for _, want := range []string{
		"### `a`\n\nIn `all`. Reads `opt` (when set).",
		"> a's note: &lt;x&gt; and DS_\\*",
		"- **Packages**: `p1`; on Rocky 8 only: `p8`",
		"- **Users**: [`u`](#users) (uid 5, gid 6)",
		"Also, when `opt` is set:\n\n- **Packages**: `p2`",
		"Reads `appliance_dir` (required: `packer validate` fails without it), `python_index_url`.",
		"    - `/etc/x`: mode `0600`, content below\n\n      ```\n      l1\n      l2\n      ```",
		"    - `/etc/f`: source `{{appliance_dir}}/f`",
		"    - `/opt/v`: index_url `{{python_index_url}}`, requirements `x==1`",
		"| [`b`](#b) | `all` | content: python_envs, files |",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("page lacks %q:\n%s", want, text)
		}
	}
}

// section is the text of group's section, up to the next heading of
// its level or above.
func section(text, group string) string {
	_, after, ok := strings.Cut(text, "\n### `"+group+"`\n")
	if !ok {
		return ""
	}
	for _, end := range []string{"\n### ", "\n## "} {
		if i := strings.Index(after, end); i >= 0 {
			after = after[:i]
		}
	}
	return after
}

// leaves are the strings of a set as the page shows them: package names
// without their el<N>: prefix, and each line of every content value.
func leaves(s packagesets.Set) []string {
	var out []string
	for _, l := range [][]string{s.Packages, s.NoWeakDeps, s.Remove, s.Modules, s.EnableRepos, s.Binaries,
		s.GrafanaPlugins, s.Users, s.Services, s.RunAfterPackages, s.NoGPGCheckRepos} {
		for _, v := range l {
			out = append(out, reMajor.ReplaceAllString(v, "$2"))
		}
	}
	walkStrings(map[string]any(s.Content), func(x string) {
		for _, line := range strings.Split(x, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				out = append(out, line)
			}
		}
	})
	for _, r := range s.NeedsRepos {
		out = append(out, r.Name)
	}
	return out
}

func itoa(n int) string { return number(n) }

var contract = filepath.Join("..", "..", "..", "docs", "appliance-contract.md")

// The contract page's section of values from the appliance is what the
// generator makes of the data, and names every source's variable.
func TestContractIsGenerated(t *testing.T) {
	d, err := decode(packagesets.Source())
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(contract)
	if err != nil {
		t.Fatal(err)
	}
	want, err := spliceContract(got, contractTable(d))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s: the appliance variables' section is not what groupsdoc makes of package_sets.yaml: run `make generate`", contract)
	}
	for g, srcs := range packagesets.ApplianceVars() {
		for _, s := range srcs {
			name := s.Var
			if s.Key != "" {
				name += "." + s.Key
			}
			if s.Var != "" && (!strings.Contains(string(got), "| [`"+g+"`]") || !strings.Contains(string(got), "`"+name+"`")) {
				t.Errorf("group %s's %s has no row", g, s.Var)
			}
		}
	}
	if _, err := spliceContract([]byte("no markers"), "x"); err == nil {
		t.Error("a page without the markers was taken")
	}
}
