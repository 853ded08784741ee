package containers

import (
	"fmt"
	"regexp"
	"strings"
)

// Image references as podman reads them.

// imageRef is a parsed image reference.
type imageRef struct {
	Registry, Repo, Tag, Digest string
}

var (
	reRepoPart = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$`)
	reTag      = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	reDigest   = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	reRegistry = regexp.MustCompile(`^(localhost|[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:]+\])(:[0-9]{1,5})?$`)
)

// parseImageRef splits s as podman does: a first component with a dot
// or a colon, or localhost, is the registry, else docker.io.
func parseImageRef(s string) (imageRef, error) {
	var r imageRef
	rest := s
	if i := strings.Index(rest, "@"); i >= 0 {
		r.Digest, rest = rest[i+1:], rest[:i]
		if !reDigest.MatchString(r.Digest) {
			return r, fmt.Errorf("digest %q in the image must be sha256: followed by 64 lowercase hex digits", r.Digest)
		}
	}
	if i := strings.LastIndex(rest, ":"); i >= 0 && !strings.Contains(rest[i:], "/") {
		r.Tag, rest = rest[i+1:], rest[:i]
		if !reTag.MatchString(r.Tag) {
			return r, fmt.Errorf("tag %q is not a valid tag", r.Tag)
		}
	}
	parts := strings.Split(rest, "/")
	if len(parts) > 1 && (strings.ContainsAny(parts[0], ".:") || parts[0] == "localhost") {
		r.Registry, parts = parts[0], parts[1:]
		if !reRegistry.MatchString(r.Registry) {
			return r, fmt.Errorf("registry %q is not host or host:port", r.Registry)
		}
	} else {
		r.Registry = "docker.io"
		if len(parts) == 1 {
			parts = append([]string{"library"}, parts...)
		}
	}
	for _, p := range parts {
		if !reRepoPart.MatchString(p) {
			return r, fmt.Errorf("name %q is not a lowercase repository name", strings.Join(parts, "/"))
		}
	}
	r.Repo = strings.Join(parts, "/")
	if r.Tag == "" && r.Digest == "" {
		return r, fmt.Errorf("has neither a tag nor a digest (an implicit latest is not a pin)")
	}
	return r, nil
}

// Name is registry/repo, the image's name in podman.
func (r imageRef) Name() string { return r.Registry + "/" + r.Repo }

// ValidRegistry reports whether s is a registry as image references
// name it: host or host:port.
func ValidRegistry(s string) bool { return reRegistry.MatchString(s) }
