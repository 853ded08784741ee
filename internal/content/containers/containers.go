//go:generate packer-sdc mapstructure-to-hcl2 -type Container
//go:generate packer-sdc struct-markdown

// Package containers is the `containers` content kind: images left in a
// user's podman storage, each resolved to its manifest digest and checked
// against its pin before any package work (by the VM with curl, or with
// content_source = "host" by the plugin, which fetches the image as an
// OCI archive), then pulled or loaded by that digest after the packages.
// Its VM side is containers.sh; the registries' TLS and credentials come
// in content.Env.Registries.
package containers

// Container is an image pulled into a user's podman storage (rootless
// for a user other than root), as the appliance leaves mysql, opensearch
// and filebeat. Its manifest digest is resolved and checked before any
// package work; the pull (or, with content_source = "host", the load of
// the archive the plugin fetched) follows the packages, by that digest,
// so what lands is what was checked.
type Container struct {
	// Image reference: `[registry/]name:tag`, `[registry/]name@sha256:<hex>`
	// or both, e.g. docker.io/library/mysql:8.0.30. Without a registry,
	// docker.io (and library/ for a one-part name), as podman and docker
	// read it.
	Image string `mapstructure:"image" required:"true"`
	// Manifest digest (`sha256:<64 hex>`) the image must have: with a
	// tag, the build fails before any package work when the tag resolves
	// to another digest. The resolved digest is recorded in image.json
	// either way.
	Digest string `mapstructure:"digest"`
	// User whose storage receives the image: root (default) or a user
	// this run creates (`users` or a group's built-in users, e.g. podman,
	// uid 1001), pulled rootless into its home as the appliance does.
	User string `mapstructure:"user"`
}

// UserOrRoot is the container's user, root by default.
func (c Container) UserOrRoot() string {
	if c.User == "" {
		return "root"
	}
	return c.User
}

// ref is the parsed image, the digest field folded in.
func (c Container) ref() imageRef {
	r, _ := parseImageRef(c.Image)
	if r.Digest == "" {
		r.Digest = c.Digest
	}
	return r
}
