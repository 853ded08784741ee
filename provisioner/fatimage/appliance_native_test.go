package fatimage

import (
	"slices"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/internal/packagesets"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
)

// TestNativeSteps: every provisioner step native.yaml names is a step of
// the table.
func TestNativeSteps(t *testing.T) {
	for _, name := range packagesets.NativeSteps() {
		if !slices.ContainsFunc(steps, func(s step) bool { return s.name == name }) {
			t.Errorf("native.yaml names step %q, not in steps", name)
		}
	}
}

// TestAppliancePhases: the steps of the real fatimage.yml fall into the
// phases around the native steps as docs/appliance-variables.md says.
func TestAppliancePhases(t *testing.T) {
	s := appliancesite.New(t, ".stackhpc", "fatimage")
	all, err := s.Steps()
	if err != nil {
		t.Fatal(err)
	}
	got := applianceSteps(all, func(string) bool { return true })
	phase := func(match func(appliance.Step) bool) string {
		i := slices.IndexFunc(got, func(a applianceStep) bool { return match(a.Step) })
		if i < 0 {
			t.Fatal("step not found")
		}
		return got[i].phase
	}
	hook := func(name string) func(appliance.Step) bool {
		return func(s appliance.Step) bool { return s.Kind == "hook" && s.Hook == name }
	}
	role := func(name string) func(appliance.Step) bool {
		return func(s appliance.Step) bool { return s.Kind == "role" && s.Name == name }
	}
	for _, c := range []struct {
		match func(appliance.Step) bool
		want  string
	}{
		{hook("pre"), phasePre}, {role("journald"), phaseBootstrap}, {role("doca"), phaseBootstrap},
		{hook("post-bootstrap"), phaseBootstrap}, {role("sssd"), phaseInstall}, {role("stackhpc.openhpc"), phaseInstall},
		{hook("post"), phaseInstall}, {role("proxy"), phaseBootstrap},
		{func(s appliance.Step) bool { return s.Name == "cleanup.yml" }, phaseInstall},
	} {
		if p := phase(c.match); p != c.want {
			t.Errorf("phase %s, want %s", p, c.want)
		}
	}
	// the post-bootstrap hook's own steps stay in its phase
	for _, a := range got {
		if a.Hook == "post-bootstrap" && a.phase != phaseBootstrap {
			t.Errorf("%s: phase %s", a.Label(), a.phase)
		}
	}
}
