package main

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/packagesets"
)

// filesDir is where the page links the plugin's own files from.
const filesDir = "../../internal/packagesets/files/"

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// code is s as inline code, fenced by enough backticks for its own.
func code(s string) string {
	if s == "" {
		return ""
	}
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if fence != "`" {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

func codes(l []string) string {
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = code(s)
	}
	return strings.Join(out, ", ")
}

// links are group names linked to their sections.
func links(groups []string) string { return anchored(groups, "") }

// anchored are names linked to an anchor: their own, or one shared.
func anchored(names []string, anchor string) string {
	out := make([]string, len(names))
	for i, n := range names {
		a := anchor
		if a == "" {
			a = n
		}
		out[i] = fmt.Sprintf("[`%s`](#%s)", n, a)
	}
	return strings.Join(out, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func number(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "–"
}

var reMajor = regexp.MustCompile(`^el(\d+):(.*)$`)

// packages lists package specs, those for one Rocky major apart.
func packages(specs []string) string {
	var all []string
	byMajor := map[string][]string{}
	for _, p := range specs {
		if m := reMajor.FindStringSubmatch(p); m != nil {
			byMajor[m[1]] = append(byMajor[m[1]], m[2])
			continue
		}
		all = append(all, p)
	}
	parts := []string{}
	if len(all) > 0 {
		parts = append(parts, codes(all))
	}
	for _, major := range sortedKeys(byMajor) {
		parts = append(parts, fmt.Sprintf("on Rocky %s only: %s", major, codes(byMajor[major])))
	}
	return strings.Join(parts, "; ")
}

func neededRepos(repos []packagesets.NeededRepo) string {
	out := make([]string, len(repos))
	for i, r := range repos {
		out[i] = fmt.Sprintf("%s (%s)", code(r.Name), r.What)
		if r.Var != "" {
			out[i] += fmt.Sprintf(", with the site's appliance from %s (role %s), no `repos` entry needed", code(r.Var), code(r.Role))
		}
	}
	return strings.Join(out, "; ")
}

func embeddedLinks(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("[`%s`](%s%s)", n, filesDir, n)
	}
	return strings.Join(out, ", ")
}

var rePlaceholder = regexp.MustCompile(`\{\{([a-z_]+)(\|[^}]*)?\}\}|\{(running_kernel|os_major)\}`)

// reads says which options (and facts of the VM) a group's values come
// from: the placeholders in its own set and in its conditional sets, and
// the options its with_option sets depend on.
func reads(s packagesets.Set) string {
	own := placeholders(s)
	cond := map[string]bool{}
	for _, set := range append(slices.Collect(maps.Values(s.WithOption)), slices.Collect(maps.Values(s.WithGroup))...) {
		maps.Copy(cond, placeholders(set))
	}
	for opt := range s.WithOption {
		cond[opt] = true
	}
	var out []string
	for _, p := range sortedKeys(own) {
		switch p {
		case "{running_kernel}":
			out = append(out, "the VM's running kernel")
		case "{os_major}":
			out = append(out, "the image's Rocky major")
		case "appliance_dir":
			out = append(out, "`appliance_dir` (required: `packer validate` fails without it)")
		default:
			out = append(out, code(p))
		}
	}
	for _, p := range sortedKeys(cond) {
		if !own[p] {
			out = append(out, code(p)+" (when set)")
		}
	}
	return strings.Join(out, ", ")
}

// placeholders are the option names ({{name}}) and VM facts
// ({running_kernel}) a set's packages and content refer to.
func placeholders(s packagesets.Set) map[string]bool {
	found := map[string]bool{}
	walk := func(v any) {
		walkStrings(v, func(x string) {
			for _, m := range rePlaceholder.FindAllStringSubmatch(x, -1) {
				if m[1] != "" {
					found[m[1]] = true
				} else {
					found["{"+m[3]+"}"] = true
				}
			}
		})
	}
	for _, p := range append(slices.Clone(s.Packages), s.NoWeakDeps...) {
		walk(p)
	}
	walk(map[string]any(s.Content))
	return found
}

// walkStrings calls f with every string in a decoded YAML value.
func walkStrings(v any, f func(string)) {
	switch x := v.(type) {
	case string:
		f(x)
	case []any:
		for _, e := range x {
			walkStrings(e, f)
		}
	case map[string]any:
		for _, e := range x {
			walkStrings(e, f)
		}
	}
}
