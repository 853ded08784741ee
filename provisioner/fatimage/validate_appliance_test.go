package fatimage

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
)

func TestValidateAppliance(t *testing.T) {
	site := appliancesite.New(t, ".stackhpc", "fatimage")
	checkout, env := site.Repo, site.Environment
	for _, tc := range []struct {
		name string
		raw  map[string]any
		want string // "" means valid
	}{
		{"strict without environment", map[string]any{"appliance_strict": true}, "appliance_strict: needs appliance_environment"},
		{"environment without checkout", map[string]any{"appliance_environment": env}, "appliance_environment: needs appliance_dir"},
		{"environment with inventory", map[string]any{"appliance_dir": checkout, "appliance_environment": env, "inventory": []string{env + "/inventory"}}, "inventory: not with appliance_environment"},
		{"missing environment", map[string]any{"appliance_dir": checkout, "appliance_environment": filepath.Join(t.TempDir(), "nope")}, "no inventory directory"},
		{"bad group", map[string]any{"appliance_dir": checkout, "appliance_environment": env, "inventory_groups": "doca,cu-da"}, `inventory group "cu-da"`},
		{"galaxy roles not found", map[string]any{"appliance_dir": checkout, "appliance_environment": env, "inventory_groups": "fatimage"}, `group "compute_init": role stackhpc.nfs: not in the environment's roles_path nor appliance_roles_path`},
		{"the real site", map[string]any{"appliance_dir": checkout, "appliance_environment": env, "inventory_groups": "fatimage", "appliance_roles_path": site.RolesPath, "appliance_collections_path": site.CollectionsPath}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c Config
			p, err := c.prepare(tc.raw)
			switch {
			case tc.want == "" && err != nil && strings.Contains(err.Error(), "appliance"):
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("want %q, got %v", tc.want, err)
			}
			// the environment's inventory decides the built-in groups
			if tc.want == "" {
				for _, g := range []string{"openhpc", "compute_init", "openondemand", "ansible_init"} {
					if !slices.Contains(p.setNames, g) {
						t.Errorf("groups from the site's inventory lack %s: %v", g, p.setNames)
					}
				}
			}
		})
	}
}
