package packagesets

import (
	"strings"
	"testing"
)

// Where the appliance's roles choose by the major in a task, the groups'
// RL8 values replace the RL9 ones on 8 only.
func TestForMajor(t *testing.T) {
	for _, tc := range []struct {
		group, path, rl9, rl8 string
	}{
		{"slurm_stats", "python_envs/0/interpreter", "python3", "python3.9"},
		{"rebuild", "python_envs/0/interpreter", "python3", "python3.9"},
		{"ansible_init", "python_envs/0/interpreter", "python3", "python3.9"},
		{"openondemand_rstudio", "rpm_urls/0/url", "/server/rhel9/x86_64/", "/server/rhel8/x86_64/"},
		{"k3s", "rpm_urls/0/url", "k3s-selinux-1.6-1.el9.noarch.rpm", "k3s-selinux-1.6-1.el8.noarch.rpm"},
	} {
		gs, err := Expand(tc.group)
		if err != nil || len(gs) != 1 {
			t.Fatal(tc.group, err)
		}
		for major, want := range map[string]string{"": tc.rl9, "9": tc.rl9, "8": tc.rl8} {
			g, err := ForMajor(gs[0], major)
			if err != nil {
				t.Fatal(err)
			}
			parent, key, err := walk(g.Content, strings.Split(tc.path, "/"))
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := parent[key].(string); !strings.Contains(got, want) {
				t.Errorf("%s on %q: %s = %q, want %q in it", tc.group, major, tc.path, got, want)
			}
		}
	}
	// the data itself is left as it was
	gs, _ := Expand("slurm_stats")
	if _, err := ForMajor(gs[0], "8"); err != nil || gs[0].Content["python_envs"].([]any)[0].(map[string]any)["interpreter"] != "python3" {
		t.Errorf("ForMajor changed the built-in data: %v", err)
	}
}
