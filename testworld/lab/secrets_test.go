package lab_test

import (
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
)

// TestAwkwardSecrets: the lab's generated secrets carry the characters
// that break naive quoting, URL building and config files, so every build
// and the secret audit run with them; .lab/env still hands them to a
// shell unchanged.
func TestAwkwardSecrets(t *testing.T) {
	labtest.Require(t)
	for name, s := range map[string]string{"Keystone password": theLab.CloudPassword,
		"application credential secret": theLab.AppCredentialSecret, "Ark password": theLab.ArkPassword, "registry password": theLab.RegistryPassword} {
		for _, c := range []string{"%", "#", ":", "@", `"`, "'", " "} {
			if !strings.Contains(s, c) {
				t.Errorf("the %s lacks %q", name, c)
			}
		}
		if utf8.RuneCountInString(s) == len(s) {
			t.Errorf("the %s has no non-ASCII character", name)
		}
	}
	env := map[string]string{"ARK_PASSWORD": theLab.ArkPassword, "OTHER": `a'b"c $HOME \ ü`}
	out, err := exec.Command("bash", "-c", lab.FormatEnv(env)+`printf '%s\n%s' "$ARK_PASSWORD" "$OTHER"`).Output()
	if err != nil || string(out) != theLab.ArkPassword+"\n"+env["OTHER"] {
		t.Fatalf("the env file does not round-trip: %q, %v", out, err)
	}
}
