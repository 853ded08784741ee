package fatimage

import (
	"slices"
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
