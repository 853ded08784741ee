package fatimage

import (
	"slices"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content/files"
)

// The plan says where each content item comes from (a group or the
// template), and Prepare leaves what the user wrote as written: the
// groups' items are in the plan, not in Config.
func TestPlanOrigins(t *testing.T) {
	c := mustGroups(t, []string{"cluster"}, map[string]any{"line_edits": []map[string]any{{"path": "/etc/motd", "line": "hello"}}})
	got := c.origins["line_edits"]
	if len(got) != len(c.LineEdits) || len(got) != 2 || got[0].String() != `group "cluster"` || got[1].String() != "the template" {
		t.Errorf("origins %v of %+v", got, c.LineEdits)
	}
	if len(c.cfg.LineEdits) != 1 || c.cfg.LineEdits[0].Path != "/etc/motd" {
		t.Errorf("Config's line_edits changed: %+v", c.cfg.LineEdits)
	}
	if !slices.ContainsFunc(c.Files, func(f files.File) bool { return f.Destination == "/etc" }) || len(c.cfg.Files) != 0 ||
		len(c.origins["files"]) != len(c.Files) {
		t.Errorf("files: plan %d (%d origins), Config %d", len(c.Files), len(c.origins["files"]), len(c.cfg.Files))
	}
}

// Users and binaries carry their origin in the plan as content items do:
// a group's, or the template's when it sets one of that name (replacing
// the group's).
func TestPlanOriginsUsersBinaries(t *testing.T) {
	c := mustGroups(t, []string{"podman", "prometheus"}, map[string]any{
		"users":    []map[string]any{{"name": "prometheus", "uid": 3001}, {"name": "site", "uid": 3000}},
		"binaries": []map[string]any{{"name": "extra", "version": "1.0", "sha256": strings.Repeat("a", 64), "url": "https://x.example/x.tgz"}},
	})
	byName := func(option string, names []string) map[string]string {
		got := map[string]string{}
		for i, n := range names {
			if i < len(c.origins[option]) {
				got[n] = c.origins[option][i].String()
			}
		}
		if len(c.origins[option]) != len(names) {
			t.Errorf("%s: %d origins for %v", option, len(c.origins[option]), names)
		}
		return got
	}
	var users, bins []string
	for _, u := range c.users {
		users = append(users, u.Name)
	}
	for _, b := range c.binaries {
		bins = append(bins, b.Name)
	}
	u := byName("users", users)
	if u["prometheus"] != "the template" || u["site"] != "the template" || u["podman"] != `group "podman"` {
		t.Errorf("users' origins %v", u)
	}
	b := byName("binaries", bins)
	if b["extra"] != "the template" || b["prometheus"] != `group "prometheus"` {
		t.Errorf("binaries' origins %v", b)
	}
}
