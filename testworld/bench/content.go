package bench

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"

	"github.com/mitchellh/mapstructure"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content/dashboards"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/files"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/keys"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/lines"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/system"
	"github.com/stackhpc/packer-plugin-fatimage/internal/gpgkeys"
	"github.com/stackhpc/packer-plugin-fatimage/internal/packagesets"
)

// The built-in groups carry content besides packages (issue #15): files,
// line edits, systemd units, modprobe blacklists, tmpfiles, Grafana
// dashboards, and the keys of the standard repositories. The playbooks
// do the same work from the same declarative data: the groups' `content`
// is decoded here into the provisioner's own option types and handed
// to Ansible as extra vars, with only what a template would otherwise
// spell out filled in (defaults of owner and mode, an embedded file's
// bytes, the dashboards' URLs). How each kind becomes files in the image
// (a modprobe file's lines, a unit's enable link, a dashboard's DS_*
// replacement) is the playbooks' own work.

// Content is the groups' content as the playbooks take it.
type Content struct {
	Files             []FileSpec      `json:"files"`
	LineEdits         []LineEditSpec  `json:"line_edits"`
	SystemdUnits      []UnitSpec      `json:"systemd_units"`
	ModprobeBlacklist []ModprobeSpec  `json:"modprobe_blacklist"`
	Tmpfiles          []ConfFileSpec  `json:"tmpfiles"`
	Limits            []ConfFileSpec  `json:"limits"`
	Sysctl            []SysctlSpec    `json:"sysctl"`
	Dashboards        []DashboardSpec `json:"grafana_dashboards"`
	// Keys are the groups' gpg_keys (site keys with content, built-ins
	// for each OS major).
	Keys []KeySpec `json:"-"`
}

// FileSpec is a file, directory or symbolic link with its mode spelt out
// (files.File's EffectiveMode).
type FileSpec struct {
	Destination string `json:"destination"`
	Kind        string `json:"kind"` // file, directory or link
	Content     string `json:"content"`
	Target      string `json:"target"`
	// Owner is "user" (its group the same name) or "user:group",
	// empty for root: the playbooks split it as the provisioner does.
	Owner string `json:"owner"`
	Mode  string `json:"mode"`
}

// LineEditSpec is one line of an existing file, as lineinfile edits it.
type LineEditSpec struct {
	Path   string `json:"path"`
	Regexp string `json:"regexp"`
	Line   string `json:"line"`
	Absent bool   `json:"absent"`
	Create bool   `json:"create"`
}

// UnitSpec is a unit file and its drop-ins under /etc/systemd/system.
type UnitSpec struct {
	Name    string         `json:"name"`
	Content string         `json:"content"`
	DropIns []ConfFileSpec `json:"drop_ins"`
	State   string         `json:"state"`
}

// ModprobeSpec is /etc/modprobe.d/<name>.conf.
type ModprobeSpec struct {
	Name    string   `json:"name"`
	Modules []string `json:"modules"`
}

// ConfFileSpec is a drop-in with literal content (ending in a newline).
type ConfFileSpec struct {
	Name    string `json:"name"`
	Content string `json:"content"`
}

// SysctlSpec is /etc/sysctl.d/<name>.conf, its settings sorted by key.
type SysctlSpec struct {
	Name     string      `json:"name"`
	Settings [][2]string `json:"settings"`
}

// DashboardSpec is a grafana.com dashboard fetched from URL into
// /var/lib/grafana/dashboards/<file>, its placeholders replaced.
type DashboardSpec struct {
	URL          string      `json:"url"`
	File         string      `json:"file"`
	Replacements [][2]string `json:"replacements"` // placeholder, data source; sorted
}

// KeySpec is a key written and imported; Major "" is for every OS major.
type KeySpec struct {
	Path  string `json:"path"`
	Key   string `json:"key"`
	Major string `json:"major"`
}

// keyMajors are the OS majors the built-in keys cover.
var keyMajors = []string{"8", "9"}

// groupContent is the content kinds the playbooks implement; a group
// carrying another kind fails decoding (ErrorUnused) rather than being
// left out of the comparison.
type groupContent struct {
	Files              []files.File                  `mapstructure:"files"`
	LineEdits          []lines.LineEdit              `mapstructure:"line_edits"`
	SystemdUnits       []system.SystemdUnit          `mapstructure:"systemd_units"`
	ModprobeBlacklists []system.ModprobeBlacklist    `mapstructure:"modprobe_blacklist"`
	Tmpfiles           []system.ConfigFile           `mapstructure:"tmpfiles"`
	Limits             []system.ConfigFile           `mapstructure:"limits"`
	Sysctls            []system.Sysctl               `mapstructure:"sysctl"`
	GrafanaDashboards  []dashboards.GrafanaDashboard `mapstructure:"grafana_dashboards"`
	GPGKeys            []keys.GPGKey                 `mapstructure:"gpg_keys"`
}

// reTemplate is what Ansible would template in a var's string.
var reTemplate = regexp.MustCompile(`\{\{|\{%|\{#`)

// GroupContent decodes the groups' content; dashboardsURL is the
// provisioner's grafana_dashboards_url.
func GroupContent(groups []packagesets.Group, dashboardsURL string) (*Content, error) {
	c := &Content{}
	for _, g := range groups {
		if len(g.Content) == 0 {
			continue
		}
		raw, err := packagesets.RenderContent(map[string]any(g.Content), func(x string) (string, error) { return x, nil })
		if err != nil {
			return nil, fmt.Errorf("group %q: %w", g.Name, err)
		}
		// Ansible would template these; the provisioner's placeholders
		// (urls of the site's mirrors) are not given to the playbooks
		if js, _ := json.Marshal(raw); reTemplate.Match(js) {
			return nil, fmt.Errorf("group %q: content with placeholders or templates is not passed to the playbooks", g.Name)
		}
		var gc groupContent
		dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{ErrorUnused: true, WeaklyTypedInput: true, Result: &gc})
		if err == nil {
			err = dec.Decode(raw)
		}
		if err != nil {
			return nil, fmt.Errorf("group %q: content the benchmark's playbooks do not implement: %w", g.Name, err)
		}
		if err := c.add(gc, dashboardsURL); err != nil {
			return nil, fmt.Errorf("group %q: %w", g.Name, err)
		}
	}
	return c, nil
}

func (c *Content) add(gc groupContent, dashboardsURL string) error {
	for _, f := range gc.Files {
		s := FileSpec{Destination: f.Destination, Owner: f.Owner, Mode: f.EffectiveMode()}
		switch {
		case f.Symlink != "":
			s.Kind, s.Target = "link", f.Symlink
		case f.Directory:
			s.Kind = "directory"
		case f.Source != "":
			return fmt.Errorf("files %s: a local source is not passed to the playbooks", f.Destination)
		default:
			s.Kind, s.Content = "file", f.Content
		}
		c.Files = append(c.Files, s)
	}
	for _, e := range gc.LineEdits {
		if e.Section != "" {
			return fmt.Errorf("line_edits %s: an INI section is not something lineinfile does", e.Path)
		}
		c.LineEdits = append(c.LineEdits, LineEditSpec{Path: e.Path, Regexp: e.Regexp, Line: e.Line, Absent: e.Absent, Create: e.Create})
	}
	for _, u := range gc.SystemdUnits {
		s := UnitSpec{Name: u.Name, State: u.State, DropIns: []ConfFileSpec{}}
		if s.State == "" {
			s.State = "disabled"
		}
		if u.Content != "" {
			s.Content = withNewline(u.Content)
		}
		for _, k := range slices.Sorted(maps.Keys(u.DropIns)) {
			s.DropIns = append(s.DropIns, ConfFileSpec{Name: k, Content: withNewline(u.DropIns[k])})
		}
		c.SystemdUnits = append(c.SystemdUnits, s)
	}
	for _, m := range gc.ModprobeBlacklists {
		c.ModprobeBlacklist = append(c.ModprobeBlacklist, ModprobeSpec(m))
	}
	for _, f := range gc.Tmpfiles {
		c.Tmpfiles = append(c.Tmpfiles, ConfFileSpec{Name: f.Name, Content: withNewline(f.Content)})
	}
	for _, f := range gc.Limits {
		c.Limits = append(c.Limits, ConfFileSpec{Name: f.Name, Content: withNewline(f.Content)})
	}
	for _, s := range gc.Sysctls {
		sp := SysctlSpec{Name: s.Name}
		for _, k := range slices.Sorted(maps.Keys(s.Settings)) {
			sp.Settings = append(sp.Settings, [2]string{k, s.Settings[k]})
		}
		c.Sysctl = append(c.Sysctl, sp)
	}
	for _, d := range gc.GrafanaDashboards {
		if d.Source != "" {
			return fmt.Errorf("grafana_dashboards %s: a local source is not passed to the playbooks", d.Source)
		}
		// grafana.com's download API, as grafana_dashboards_url serves it
		ds := DashboardSpec{File: fmt.Sprintf("%d.json", d.ID), Replacements: [][2]string{},
			URL: fmt.Sprintf("%s/api/dashboards/%d/revisions/%d/download", strings.TrimRight(dashboardsURL, "/"), d.ID, d.Revision)}
		for _, k := range slices.Sorted(maps.Keys(d.Replacements)) {
			ds.Replacements = append(ds.Replacements, [2]string{k, d.Replacements[k]})
		}
		c.Dashboards = append(c.Dashboards, ds)
	}
	for _, k := range gc.GPGKeys {
		if k.Builtin == "" {
			if k.Key == "" {
				return fmt.Errorf("gpg_keys %s: a key without content is not passed to the playbooks", k.Path)
			}
			c.Keys = append(c.Keys, KeySpec{Path: k.Path, Key: k.Key})
			continue
		}
		keys, err := builtinKeys(k.Builtin, k.Path, nil)
		if err != nil {
			return err
		}
		c.Keys = append(c.Keys, keys...)
	}
	return nil
}

// builtinKeys is built-in key name for each OS major, at its own path
// (or at p), but for the paths in replaced.
func builtinKeys(name, p string, replaced map[string]bool) ([]KeySpec, error) {
	var out []KeySpec
	for _, m := range keyMajors {
		k, err := gpgkeys.ByName(name, m)
		if err != nil {
			return nil, err
		}
		dst := k.Path
		if p != "" {
			dst = p
		}
		if !replaced[dst] {
			out = append(out, KeySpec{Path: dst, Key: string(k.Armored()), Major: m})
		}
	}
	return out, nil
}

// ImageKeys are the keys the provisioner writes and imports for these
// repositories and site keys: the standard repositories' built-in keys
// (once each, in repos order; a site key at the same path replaces
// one), then the site's keys, then the groups' (extra).
func ImageKeys(repoNames []string, site []map[string]string, extra []KeySpec) []KeySpec {
	sitePaths := map[string]bool{}
	for _, k := range site {
		sitePaths[k["path"]] = true
	}
	var out []KeySpec
	seen := map[string]bool{}
	for _, r := range repoNames {
		k, ok := gpgkeys.ForRepo(r, keyMajors[0])
		if !ok || seen[k.Name] {
			continue
		}
		seen[k.Name] = true
		keys, _ := builtinKeys(k.Name, "", sitePaths) // a standard repository's key has every major
		out = append(out, keys...)
	}
	for _, k := range site {
		out = append(out, KeySpec{Path: k["path"], Key: k["key"]})
	}
	return append(out, extra...)
}

func withNewline(s string) string {
	if strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// RcloneStub is the /usr/bin/rclone the provisioner's cleanup leaves on
// every build (the appliance's cleanup.yml), read from the provisioner's
// own cleanup script so that both sides write the same bytes.
func RcloneStub() (string, error) {
	_, self, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(self), "..", "..", "provisioner", "fatimage", "scripts", "cleanup.sh")
	data, err := os.ReadFile(script)
	if err != nil {
		return "", fmt.Errorf("the rclone stub: %w", err)
	}
	_, rest, ok := strings.Cut(string(data), "cat >\"$r/usr/bin/rclone\" <<'FATIMAGE_EOF'\n")
	body, _, ok2 := strings.Cut(rest, "\nFATIMAGE_EOF\n")
	if !ok || !ok2 || body == "" {
		return "", fmt.Errorf("the rclone stub: no heredoc for /usr/bin/rclone in %s", script)
	}
	return body + "\n", nil
}
