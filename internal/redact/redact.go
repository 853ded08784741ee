// Package redact replaces every secret a plugin process knows, in every
// form it travels in, by <sensitive>: in the process's log output (which
// Packer copies into PACKER_LOG), in the Ui and in the errors handed back
// to Packer.
//
// packersdk.LogSecretFilter cannot do this in a plugin: with SDK v0.6.10
// only Packer core's BasicUi applies it, and a plugin's Ui is an RPC
// client, so its Set only matters to code that calls FilterString itself.
// Filtering here applies it too, so what other code registers there (the
// SDK's own steps) is hidden as well.
package redact

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
)

// Marker replaces each secret.
const Marker = "<sensitive>"

// known is the process's secrets: a plugin process serves one component,
// as Packer core starts one per use.
var known = &Set{}

// Set is a set of secrets in all their forms.
type Set struct {
	mu    sync.RWMutex
	forms map[string]bool
	r     *strings.Replacer
}

// Add registers secrets (bearer tokens, passwords, application credential
// secrets) with all their encodings.
func (s *Set) Add(secrets ...string) {
	var forms []string
	for _, secret := range secrets {
		forms = append(forms, Forms(secret)...)
	}
	s.addForms(forms)
}

// AddBasic registers a password sent as HTTP Basic auth (or written into a
// registry auth file) with the user it goes with.
func (s *Set) AddBasic(user, password string) { s.addForms(BasicForms(user, password)) }

func (s *Set) addForms(forms []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.forms == nil {
		s.forms = map[string]bool{}
	}
	added := false
	for _, f := range forms {
		if f != "" && !s.forms[f] {
			s.forms[f] = true
			added = true
		}
	}
	if !added {
		return
	}
	// Longest first: where one form contains another the whole of it goes.
	all := slices.SortedFunc(func(yield func(string) bool) {
		for f := range s.forms {
			if !yield(f) {
				return
			}
		}
	}, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	pairs := make([]string, 0, 2*len(all))
	for _, f := range all {
		pairs = append(pairs, f, Marker)
	}
	s.r = strings.NewReplacer(pairs...)
}

// String returns msg with every known form of every secret replaced.
func (s *Set) String(msg string) string {
	s.mu.RLock()
	r := s.r
	s.mu.RUnlock()
	if r != nil {
		msg = r.Replace(msg)
	}
	return packersdk.LogSecretFilter.FilterString(msg)
}

// Forms are the spellings of secret that logs and error texts carry: as
// is, URL-encoded (query and path), in a URL's user info, JSON- and
// Go-quoted, and base64.
func Forms(secret string) []string {
	if secret == "" {
		return nil
	}
	forms := []string{secret, url.QueryEscape(secret), url.PathEscape(secret), userinfo(secret), quoted(strconv.Quote(secret))}
	if j, err := json.Marshal(secret); err == nil {
		forms = append(forms, quoted(string(j)))
	}
	forms = append(forms, base64Forms(secret)...)
	return compact(forms)
}

// BasicForms are Forms(password) and the encodings of "user:password" that
// an Authorization: Basic header or a registry auth file ({"auth": ...})
// carry.
func BasicForms(user, password string) []string {
	if password == "" {
		return nil
	}
	forms := append(Forms(password), base64Forms(user+":"+password)...)
	return compact(forms)
}

func base64Forms(s string) []string {
	b := []byte(s)
	return []string{
		base64.StdEncoding.EncodeToString(b), base64.RawStdEncoding.EncodeToString(b),
		base64.URLEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b),
	}
}

// userinfo is how net/url spells a password in user:password@host.
func userinfo(secret string) string {
	return strings.TrimPrefix(url.UserPassword("u", secret).String(), "u:")
}

func quoted(q string) string { return q[1 : len(q)-1] }

func compact(forms []string) []string {
	slices.Sort(forms)
	return slices.Compact(forms)
}

// Add registers secrets with the process's set.
func Add(secrets ...string) { known.Add(secrets...) }

// AddBasic registers a Basic-auth password with the process's set.
func AddBasic(user, password string) { known.AddBasic(user, password) }

// String redacts msg with the process's set.
func String(msg string) string { return known.String(msg) }

// Error returns err with its text redacted; err itself when nothing in it
// is secret, so its type survives for Packer's formatting.
func Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if clean := String(msg); clean != msg {
		return errors.New(clean)
	}
	return err
}

// Writer redacts what goes through it. The log package writes each entry
// with one Write, so a secret in an entry never straddles two.
func Writer(w io.Writer) io.Writer { return &writer{w: w} }

type writer struct{ w io.Writer }

func (w *writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(w.w, String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
