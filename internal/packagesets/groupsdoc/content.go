package main

import (
	"fmt"
	"slices"
	"strings"
)

// kindOrder is the order content kinds are listed in: roughly the order
// a build does them; a kind not listed here follows, by name.
var kindOrder = []string{"gpg_keys", "git_checkouts", "downloads", "rpm_urls", "python_envs", "containers",
	"grafana_dashboards", "files", "systemd_units", "sysctl", "modprobe_blacklist", "tmpfiles", "limits",
	"kernel_args", "line_edits"}

// identities are the fields naming an item, tried in this order.
var identities = []string{"destination", "name", "path", "image", "url", "id", "source", "builtin", "interpreter"}

func contentKinds(c map[string]any) []string { return orderedKeys(c, kindOrder) }

// content lists a set's content, a bullet per kind and one per item
// below it, as the indented lines of a list item.
func content(c map[string]any) string {
	var lines []string
	for _, kind := range contentKinds(c) {
		lines = append(lines, "  - `"+kind+"`:")
		items, ok := c[kind].([]any)
		if !ok {
			items = []any{c[kind]}
		}
		for _, it := range items {
			lines = append(lines, contentItem(it)...)
		}
	}
	return strings.Join(lines, "\n")
}

// contentItem is one item: its identity, then its other fields in name
// order, a multi-line value as a code block below.
func contentItem(it any) []string {
	const indent = "    - "
	m, ok := it.(map[string]any)
	if !ok {
		return []string{indent + value(it)}
	}
	var head string
	var fields, blocks []string
	for _, id := range identities {
		if v, ok := m[id]; ok {
			head, m = value(v), without(m, id)
			break
		}
	}
	for _, k := range orderedKeys(m, leading) {
		switch v := m[k].(type) {
		case string:
			if strings.Contains(strings.TrimSuffix(v, "\n"), "\n") {
				fields = append(fields, k+" below")
				blocks = append(blocks, codeBlock(v, "      ")...)
				continue
			}
			if k == "embedded" {
				fields = append(fields, fmt.Sprintf("the plugin's file [`%s`](%s%s)", v, filesDir, v))
				continue
			}
		case bool:
			if v {
				fields = append(fields, k)
				continue
			}
		}
		fields = append(fields, k+" "+value(m[k]))
	}
	line := indent + head
	if len(fields) > 0 {
		if head != "" {
			line += ": "
		}
		line += strings.Join(fields, ", ")
	}
	return append([]string{line}, blocks...)
}

// leading are the fields listed first, after the identity.
var leading = []string{"system", "revision", "tag", "branch", "commit", "sha256", "state", "user", "owner", "mode"}

// orderedKeys is m's keys: those of first that it has, in that order,
// then the rest by name.
func orderedKeys(m map[string]any, first []string) []string {
	var out []string
	for _, k := range first {
		if _, ok := m[k]; ok {
			out = append(out, k)
		}
	}
	for _, k := range sortedKeys(m) {
		if !slices.Contains(first, k) {
			out = append(out, k)
		}
	}
	return out
}

func without(m map[string]any, key string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// value is a decoded YAML value as inline code: lists joined, maps as
// key=value pairs by key.
func value(v any) string {
	switch x := v.(type) {
	case []any:
		out := make([]string, len(x))
		for i, e := range x {
			out[i] = value(e)
		}
		return strings.Join(out, ", ")
	case map[string]any:
		out := make([]string, 0, len(x))
		for _, k := range sortedKeys(x) {
			out = append(out, code(fmt.Sprintf("%s=%v", k, x[k])))
		}
		return strings.Join(out, ", ")
	case string:
		return code(strings.TrimSuffix(x, "\n"))
	}
	return code(fmt.Sprint(v))
}

// codeBlock is text as a fenced block indented to sit in a list item.
func codeBlock(text, indent string) []string {
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	out := []string{"", indent + fence}
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		out = append(out, strings.TrimRight(indent+l, " "))
	}
	return append(out, indent+fence)
}
