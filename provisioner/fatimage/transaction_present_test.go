package fatimage

import (
	"slices"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
)

// TestPresentSpec: the specs rpm may find present are names (a provide
// only as rpm finds no package of that name),
// with or without a per-major prefix; what dnf reads otherwise (globs,
// paths, local RPM files, URLs, groups, module profiles) and the
// placeholders of versions keep the install.
func TestPresentSpec(t *testing.T) {
	for spec, want := range map[string]bool{
		"python3": true, "python3-libs": true, "python3.12": true, "java-1.8.0-openjdk": true,
		"python3dist(requests)": true, "perl(Foo::Bar)": true, "el8:python39": true,
		// a version matches no provide's name: rpm sends it to the install
		"ondemand-4.1.4": true, "nvidia-open-3:610.57.04-1.el9": true,
		"kernel-devel-{running_kernel}": false, "nvidia-open-3:610.57.04-1.el{os_major}": false,
		"lab-*": false, "python3.1?": false, "python3.[0-9]": false,
		"/usr/bin/python3": false, "/var/tmp/fatimage/rpm-0.rpm": false, "lustre-client.rpm": false,
		"https://example.com/x.rpm": false, "@Development Tools": false, "@nodejs:22/common": false,
		"el9:": false, "": false,
	} {
		if got := presentSpec(spec); got != want {
			t.Errorf("presentSpec(%q) = %v, want %v", spec, got, want)
		}
	}
}

// TestPresentOnlyWithoutUpdate: without the update, the Slurm set and the
// installs rpm may find present are asked about; with it, none
// (everything goes to the newest).
func TestPresentOnlyWithoutUpdate(t *testing.T) {
	for _, update := range []bool{false, true} {
		pl := mustGroups(t, []string{"openhpc"}, map[string]any{"update": update,
			"packages": []string{"python3", "@Xfce"}})
		got := pl.packagePlan().Present
		if update {
			if got != nil {
				t.Errorf("update: Present = %q, want none", got)
			}
			continue
		}
		for _, want := range []string{"slurm-ohpc", "munge", "apptainer", "python3"} {
			if !slices.Contains(got, want) {
				t.Errorf("Present lacks %s: %q", want, got)
			}
		}
		if slices.Contains(got, "@Xfce") {
			t.Errorf("Present = %q: a group", got)
		}
	}
}

// TestPresentNotLatest: a site's grafana_version `latest` is the bare
// grafana, which cloudalchemy.grafana installs with `state: latest`: it
// goes to the newest even without the update; the rest stays present.
func TestPresentNotLatest(t *testing.T) {
	c := siteConfig(t)
	res := overridesResult()
	holdAll(res, true)
	res.Values[""]["grafana_version"] = appliance.Value{Defined: true, Value: "latest"}
	pl, err := c.plan(newApplianceValues(res, ""), "")
	if err != nil {
		t.Fatal(err)
	}
	p := pl.packagePlan()
	if p.Update || !slices.Contains(p.Install, "grafana") || slices.Contains(p.Present, "grafana") || !slices.Contains(p.Present, "htop") {
		t.Errorf("update %v, install %q, present %q: want grafana installed at the newest, htop present", p.Update, p.Install, p.Present)
	}
}

// TestTransactionKeepsPresent runs the transaction with a stand-in rpm
// that knows the packages python3 and htop.x86_64 installed: those stay
// out of the install; the others (python39, a provide of python3 but no
// installed package's name, one not installed, a pinned version, a
// group) stay in, in one rpm query.
func TestTransactionKeepsPresent(t *testing.T) {
	rpm := `case "$1" in -q) shift; n=0
  for a; do case $a in python3|htop.x86_64) echo "$a-1-1.el9.x86_64" ;; *) echo "package $a is not installed"; n=$((n+1)) ;; esac; done
  exit $n ;; esac
exit 1`
	p := packagePlan{Install: []string{"python3", "htop.x86_64", "ondemand-4.1.4", "@Xfce"}, NoWeakDeps: []string{"python39", "slurm-ohpc"}, WeakDeps: true}
	p.Present = []string{"python39", "slurm-ohpc", "python3", "htop.x86_64", "ondemand-4.1.4"}
	out, calls, err := runFaked(t, p.script(), map[string]string{"dnf": "exit 0", "rpm": rpm})
	if err != nil {
		t.Fatal(err, out)
	}
	kept := "python3: installed, kept at its version (present; update is off)\n" +
		"htop.x86_64: installed, kept at its version (present; update is off)\n"
	tx := "dnf transaction:\n  config install_weak_deps False\n  install python39 slurm-ohpc\n  run\n" +
		"  config install_weak_deps true\n  install ondemand-4.1.4 @Xfce\n  run\n"
	if !strings.Contains(out, kept+tx) {
		t.Errorf("output:\n%s\nwant\n%s", out, kept+tx)
	}
	if n := strings.Count(strings.Join(calls, "\n"), "rpm|-q|python39|slurm-ohpc|python3|htop.x86_64|ondemand-4.1.4\n"); n != 1 {
		t.Errorf("%d rpm -q queries of the present specs, want 1:\n%s", n, strings.Join(calls, "\n"))
	}
}
