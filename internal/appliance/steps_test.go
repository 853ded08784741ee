package appliance_test

import (
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
)

func TestStepsDump(t *testing.T) {
	s := appliancesite.New(t, appliancesite.Overrides)
	steps, err := s.Steps()
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range steps {
		t.Logf("%-25s %-8s %-40s %-30s hook=%s absent=%v when=%q", st.File, st.Kind, st.Name+" "+st.TasksFrom, st.Hosts, st.Hook, st.Absent, st.When)
	}
}
