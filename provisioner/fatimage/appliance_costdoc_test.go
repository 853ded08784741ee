package fatimage

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
)

// askedSentence says what one resolution asks, counted from req: the
// built-in groups' variables and role conditions by scope, and what
// decides the steps of fatimage.yml and of env's hooks.
func askedSentence(req appliance.Request, env string) string {
	vars, conds := 0, 0
	var roles []string
	for _, q := range req.Queries {
		vars += len(q.Vars) + len(q.Texts)
		conds += len(q.Conditions)
		if q.Role != "" {
			roles = append(roles, "`"+q.Role+"`")
		}
	}
	var tasks []string
	for _, ref := range req.Tasks {
		tasks = append(tasks, "`"+ref.String()+"`")
	}
	return fmt.Sprintf("A build asks, in one ansible-playbook run: %d variables and %d conditions in %d scopes (no role's, and the roles %s), "+
		"and, for the steps of `fatimage.yml` and the hooks of `%s`, %d host patterns, %d conditions and %d templated task files. "+
		"Without Ansible, it reads the package tasks written in %s.",
		vars, conds, len(req.Queries), strings.Join(roles, ", "), env, len(req.Patterns), len(req.Conditions), len(req.Expressions),
		strings.Join(tasks, ", "))
}

// TestApplianceCostDoc: docs/appliance-variables.md's Cost section says
// what a build asks as the code counts it (ApplianceRequest on the real
// checkout), so the count cannot drift from the code by hand.
func TestApplianceCostDoc(t *testing.T) {
	const env = ".stackhpc" // the appliance's own CI environment
	req, _, err := ApplianceRequest(appliancesite.New(t, env, "fatimage"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../../docs/appliance-variables.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(string(data)), " ")
	if want := askedSentence(req, env); !strings.Contains(doc, want) {
		t.Errorf("docs/appliance-variables.md (Cost) must say, wrapped as you like:\n%s", want)
	}
}
