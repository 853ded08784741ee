package fatimage

import (
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
)

// TestGroupWithSpaceStaysOneWord: "@Development Tools" reaches dnf shell
// as one word. The stand-in dnf splits the transaction's lines with
// Python's shlex.split, as dnf's shell command does
// (dnf/cli/commands/shell.py), and prints the words.
func TestGroupWithSpaceStaysOneWord(t *testing.T) {
	needs.Tools(t, "python3")
	dnf := `for a; do case $a in */transaction.dnf) python3 -c 'import shlex, sys
for l in open(sys.argv[1]):
    print("WORDS " + "|".join(shlex.split(l)))' "$a" ;; esac; done`
	p := packagePlan{Install: []string{"@Development Tools", "htop"}}
	out, _, err := runFaked(t, p.script(), map[string]string{"dnf": dnf, "rpm": "exit 1"})
	if err != nil {
		t.Fatal(err, out)
	}
	if !strings.Contains(out, "WORDS install|@Development Tools|htop\n") {
		t.Fatalf("dnf shell does not read the group as one word:\n%s", out)
	}
}
