package fatimage

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
)

func TestValidateAppliance(t *testing.T) {
	checkout := appliancesite.Checkout(t)
	env := filepath.Join(checkout, "environments", ".stackhpc")
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
		{"the real site", map[string]any{"appliance_dir": checkout, "appliance_environment": env, "inventory_groups": "fatimage"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c Config
			_, err := c.prepare(tc.raw)
			switch {
			case tc.want == "" && err != nil && strings.Contains(err.Error(), "appliance"):
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("want %q, got %v", tc.want, err)
			}
		})
	}
}
