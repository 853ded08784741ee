package content

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode"
)

// Checks the content kinds share with the provisioner's own options. A
// URL carrying user info would put its credentials in the build output,
// in errors and in a command line on the VM: every URL option is refused
// one (the credential options travel only in files on the tmpfs).

// NoCredentialOption is what to do instead when the option has no
// credential option of its own.
const NoCredentialOption = "no option takes credentials for it: use a location that needs none"

// CheckURL is the problem with s as the http(s) URL of field, "" when none.
func CheckURL(field, s string) string {
	if s == "" {
		return field + " is required"
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Sprintf("%s %q must be an http(s) URL", field, WithoutUserInfo(s))
	}
	if msg := URLCredentials(field, u, NoCredentialOption); msg != "" {
		return msg
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Sprintf("%s %q must be an http(s) URL", field, s)
	}
	return ""
}

// URLCredentials refuses user info in u, naming field, showing the URL
// without it and saying what to do instead.
func URLCredentials(field string, u *url.URL, instead string) string {
	if u.User == nil {
		return ""
	}
	bare := *u
	bare.User = nil
	return fmt.Sprintf("%s %q must not carry credentials (user info before @): they would show in the output and in command lines on the VM; %s", field, bare.String(), instead)
}

// WithoutUserInfo is s with anything between "//" and the host's "@"
// removed, for messages about a string that is not even a URL.
func WithoutUserInfo(s string) string {
	scheme, rest, ok := strings.Cut(s, "//")
	if !ok {
		return s
	}
	auth, path, _ := strings.Cut(rest, "/")
	if i := strings.LastIndex(auth, "@"); i >= 0 {
		auth = "xxxxx" + auth[i:]
	}
	if path != "" || strings.HasSuffix(rest, "/") {
		auth += "/" + path
	}
	return scheme + "//" + auth
}

// reName is a user or group name.
var reName = regexp.MustCompile(`^[a-z_][a-z0-9_-]*\$?$`)

// ValidOwner reports whether o is "", "user" or "user:group".
func ValidOwner(o string) bool {
	if o == "" {
		return true
	}
	u, g, hasGroup := strings.Cut(o, ":")
	return reName.MatchString(u) && (!hasGroup || reName.MatchString(g))
}

// RootOwner reports whether an owner option leaves root the owner.
func RootOwner(o string) bool { return o == "" || o == "root" || o == "root:root" }

// ItemErrs collects the errors of one list item, each prefixed with
// "<option>[i]: ".
func ItemErrs(errs *[]error, option string, i int) func(string, ...any) {
	return func(f string, a ...any) {
		*errs = append(*errs, fmt.Errorf("%s[%d]: "+f, append([]any{option, i}, a...)...))
	}
}

// CheckPinnedSHA256 is the problem with a sha256 pin and its opt-out
// (insecure_skip_checksum), or "": one is required (why says why), not
// both, and a pin is 64 hex digits.
func CheckPinnedSHA256(sum string, skip bool, why string) string {
	switch {
	case sum == "" && !skip:
		return "sha256 is required: " + why + " (insecure_skip_checksum = true installs whatever the URL serves)"
	case sum != "" && skip:
		return "sha256 and insecure_skip_checksum = true exclude each other"
	case sum != "":
		if h, err := hex.DecodeString(sum); err != nil || len(h) != sha256.Size {
			return "sha256 must be 64 hex digits"
		}
	}
	return ""
}

// CheckCredential is the problem with the value of a credential option,
// "" when none: a control character (a newline above all) would end the
// line of the repo file, curl config or header it is written into and
// start another.
func CheckCredential(field, v string) string {
	if strings.ContainsFunc(v, unicode.IsControl) {
		return field + ": must not contain control characters (newlines, tabs, ...)"
	}
	return ""
}
