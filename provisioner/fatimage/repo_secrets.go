package fatimage

import (
	"slices"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/redact"
)

// secretOptionWords mark a repos option (an extra key of a section) as a
// credential: proxy_password, proxy_username, a token... Such options go
// only into the build's repo files on the tmpfs, never into the disabled
// ones left in the image (sslclientkey and the like name files, not
// secrets, and stay).
var secretOptionWords = []string{"password", "passwd", "token", "secret", "username", "credential"}

// isSecretOption reports whether repos option k holds a credential.
func isSecretOption(k string) bool {
	return slices.ContainsFunc(secretOptionWords, func(w string) bool { return strings.Contains(k, w) })
}

// repoOptionSecrets are the values of the repos' credential options but
// user names: those are no secret, and as patterns of the redaction and
// the clean check a short one ("proxy") would match ordinary text.
func (p *plan) repoOptionSecrets() []string {
	var out []string
	for _, r := range p.repos {
		for k, v := range r.Options {
			if isSecretOption(k) && !strings.Contains(k, "username") && v != "" {
				out = append(out, v)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// knownSecrets are every credential the run knows, in every form it may
// be written in (internal/redact): what must not be left in the image.
func (p *plan) knownSecrets() []string {
	forms := redact.BasicForms(p.repoUsername, p.repoPassword)
	for _, r := range p.cfg.ContainerRegistries {
		forms = append(forms, redact.BasicForms(r.Username, r.Password)...)
	}
	for _, s := range p.repoOptionSecrets() {
		forms = append(forms, redact.Forms(s)...)
	}
	forms = append(forms, p.proxy().secrets()...)
	forms = slices.DeleteFunc(forms, func(f string) bool { return f == "" })
	slices.Sort(forms)
	return slices.Compact(forms)
}
