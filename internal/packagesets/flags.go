package packagesets

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
)

// collectorFlags are prometheus.prometheus.node_exporter's
// node_exporter_enabled_collectors as its unit template makes them: a
// name is `--collector.<name>`; a mapping of one name to its options is
// `--collector.<name>` then `--collector.<name>.<option>=<value>` per
// option, options in key order (the template's dictsort).
func collectorFlags(v any) ([]string, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%v is not a list", v)
	}
	var flags []string
	for i, c := range list {
		if name, ok := c.(string); ok {
			flags = append(flags, "--collector."+name)
			continue
		}
		m, ok := c.(map[string]any)
		if !ok || len(m) != 1 {
			return nil, fmt.Errorf("[%d]: %v is neither a collector's name nor a mapping of one name to its options", i, c)
		}
		for name, o := range m {
			opts, ok := o.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("[%d]: %s's options %v are not a mapping", i, name, o)
			}
			flags = append(flags, "--collector."+name)
			for _, k := range slices.Sorted(maps.Keys(opts)) {
				text, err := jinjaText(opts[k])
				if err != nil {
					return nil, fmt.Errorf("[%d]: %s.%s: %w", i, name, k, err)
				}
				flags = append(flags, "--collector."+name+"."+k+"="+text)
			}
		}
	}
	return flags, nil
}

// execWords are words as a systemd unit's ExecStart passes them to the
// command unchanged, each after a space: `%` and `$` doubled (else
// systemd expands them), a word with a space or a double quote in single
// quotes (as the role's template quotes every flag). A word systemd would
// unescape (a backslash, a single quote, a control character) is refused.
func execWords(words []string) (string, error) {
	var b strings.Builder
	for _, w := range words {
		if strings.ContainsAny(w, `\'`) || strings.ContainsFunc(w, unicode.IsControl) {
			return "", fmt.Errorf("%q: a backslash, single quote or control character is not passed on as written in a unit's ExecStart", w)
		}
		w = strings.NewReplacer("%", "%%", "$", "$$").Replace(w)
		if w == "" || strings.ContainsFunc(w, unicode.IsSpace) || strings.Contains(w, `"`) {
			w = "'" + w + "'"
		}
		b.WriteString(" " + w)
	}
	return b.String(), nil
}
