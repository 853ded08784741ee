package fatimage

import (
	"slices"
	"strings"
	"testing"
)

// The openhpc group's Slurm set is installed without weak dependencies,
// everything else at dnf's default (the appliance's scoping), still in
// the one dnf shell process.
func TestPackagePlanNoWeakDeps(t *testing.T) {
	slurm := []string{"ohpc-slurm-server", "slurm-slurmctld-ohpc", "slurm-example-configs-ohpc", "ohpc-base-compute", "ohpc-slurm-client",
		"slurm-ohpc", "munge", "slurm-slurmd-ohpc", "lmod-ohpc", "slurm-slurmdbd-ohpc"}
	c := mustGroups(t, []string{"openhpc", "extra_packages"}, map[string]any{"packages": []string{"munge", "htop"}})
	p := c.packagePlan()
	if !slices.Equal(p.NoWeakDeps, slurm) {
		t.Errorf("no_weak_deps %v\nwant %v", p.NoWeakDeps, slurm)
	}
	// munge, also asked for by the template, goes with the Slurm set only
	if slices.Contains(p.Install, "munge") || !slices.Contains(p.Install, "slurm-libpmi-ohpc") || !slices.Contains(p.Install, "htop") {
		t.Errorf("install %v", p.Install)
	}
	if !p.WeakDeps {
		t.Error("install_weak_deps defaults to false; dnf's (and the appliance's) default is true")
	}
	if p := mustGroups(t, []string{"openhpc"}, map[string]any{"install_weak_deps": false}).packagePlan(); p.WeakDeps {
		t.Error("install_weak_deps = false ignored")
	}
	if !strings.Contains(p.headline(), "30 to install (10 without weak dependencies), 0 to remove in one dnf process (two transactions)") {
		t.Errorf("headline %q", p.headline())
	}
	if (packagePlan{NoWeakDeps: []string{"munge"}}).empty() {
		t.Error("a plan with only the Slurm set is empty")
	}
}

func TestPackagesScriptNoWeakDeps(t *testing.T) {
	dnf := `if [ "$1" = -y ]; then for a; do case $a in */transaction.dnf) cat "$a" >> "$(dirname "$a")/shell-input" ;; esac; done; fi`
	rpm := `case "$1 $2" in "-qa grafana") echo grafana-9 ;; "-q --qf") ;; "-q "*) exit 1 ;; esac`
	p := packagePlan{Update: true, NoWeakDeps: []string{"slurm-ohpc", "munge", "grafana"}, Install: []string{"htop", "/w/x.rpm"},
		KeepAsIs: []string{"grafana"}, WeakDeps: true, NoGPGCheck: []string{"cernvmfs_eessi_cfg"}}
	out, calls, err := runFaked(t, p.script(), map[string]string{"dnf": dnf, "rpm": rpm})
	if err != nil {
		t.Fatal(err, out)
	}
	// the Slurm set first with weak dependencies off (grafana, installed
	// and kept as is, is left out), then the setting back and the rest:
	// the local RPM first in its transaction, as dnf shell requires
	want := "dnf transaction:\n  config cernvmfs_eessi_cfg.gpgcheck False\n  config install_weak_deps False\n  install slurm-ohpc munge\n  run\n  config install_weak_deps true\n" +
		"  install /w/x.rpm\n  upgrade\n  install htop\n  run\n"
	if !strings.Contains(out, want) {
		t.Errorf("transaction:\n%s\nwant\n%s", out, want)
	}
	var shells int
	for _, c := range calls {
		if strings.HasPrefix(c, "dnf|") {
			shells++
			if !strings.Contains(c, "|--setopt=install_weak_deps=true|") || !strings.Contains(c, "|shell|") {
				t.Errorf("dnf call %s", c)
			}
		}
	}
	if shells != 1 {
		t.Errorf("%d dnf processes, want the one dnf shell:\n%s", shells, strings.Join(calls, "\n"))
	}
	// the Slurm set alone: one run, no empty second one
	out, _, err = runFaked(t, packagePlan{NoWeakDeps: []string{"munge"}}.script(), map[string]string{"dnf": dnf, "rpm": "exit 1"})
	if err != nil || !strings.Contains(out, "dnf transaction:\n  config install_weak_deps False\n  install munge\n  run\n  config install_weak_deps false\n") ||
		strings.Count(out, "  run\n") != 1 {
		t.Errorf("Slurm set alone: %v\n%s", err, out)
	}
}
