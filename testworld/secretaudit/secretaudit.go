// Package secretaudit spells out every form a credential can leak in (the
// forms internal/redact hides: URL-encoded, in a URL's user info, quoted,
// base64, a Basic header's user:password) so a test can look for all of
// them in a log, an output, a manifest or an image, not only the raw text.
package secretaudit

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/stackhpc/packer-plugin-fatimage/internal/redact"
)

// Credential is one secret a test configures. User is set when the secret
// travels as HTTP Basic auth or in a registry auth file, so the encodings
// of "user:secret" are looked for too.
type Credential struct {
	Name, User, Secret string
}

// Forms maps a name per form ("Ark password", "Ark password (derived
// form 3)") to its bytes, for every credential.
func Forms(creds ...Credential) map[string][]byte {
	out := map[string][]byte{}
	for _, c := range creds {
		if c.Secret == "" {
			continue
		}
		var forms []string
		if c.User != "" {
			forms = redact.BasicForms(c.User, c.Secret)
		} else {
			forms = redact.Forms(c.Secret)
		}
		n := 0
		for _, f := range forms {
			if f == c.Secret {
				out[c.Name] = []byte(f)
				continue
			}
			n++
			out[fmt.Sprintf("%s (derived form %d)", c.Name, n)] = []byte(f)
		}
	}
	return out
}

// Find returns the names of the forms data carries, sorted.
func Find(data []byte, forms map[string][]byte) []string {
	var found []string
	for name, f := range forms {
		if len(f) > 0 && bytes.Contains(data, f) {
			found = append(found, name)
		}
	}
	slices.Sort(found)
	return found
}
