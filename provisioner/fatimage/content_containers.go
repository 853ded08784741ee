//go:generate packer-sdc struct-markdown

package fatimage

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
)

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

// ContainerRegistry is how to reach one registry: TLS and credentials.
type ContainerRegistry struct {
	// Registry as image references name it, host or host:port, e.g.
	// docker.io or registry.example.org:5000.
	Host string `mapstructure:"host" required:"true"`
	// Talk to the registry over plain HTTP or unverified TLS (podman's
	// --tls-verify=false, registries.conf's insecure = true), for a
	// site's internal mirror without a trusted certificate. Only for the
	// build's pulls: nothing is written to the image's registries.conf.
	Insecure bool `mapstructure:"insecure"`
	// Username for the registry; with password. Without them, the
	// plugin's own fetches (content_source = "host") use what the build
	// host's docker or podman configuration holds for the registry
	// (config.json and its credential helpers, or auth.json); the VM's
	// pulls use only these.
	Username string `mapstructure:"username"`
	// Password or token for the registry. Sensitive: it reaches the VM
	// only in a private, temporary auth file removed after the pull, and
	// never appears in logs, output, image.json or the image.
	Password string `mapstructure:"password"`
}

// user is the container's user, root by default.
func (c Container) user() string {
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

func (c *ContentOptions) hasContainers() bool { return len(c.Containers) > 0 }

// registry is the configuration of host, zero when none.
func (c *Config) registry(host string) ContainerRegistry {
	for _, r := range c.ContainerRegistries {
		if r.Host == host {
			return r
		}
	}
	return ContainerRegistry{Host: host}
}

// validateContainers checks containers and container_registries.
func validateContainers(c *Config, p *plan) []error {
	var errs []error
	known := map[string]bool{"root": true}
	for _, u := range p.users {
		known[u.Name] = true
	}
	for i, ct := range c.Containers {
		add := itemErrs(&errs, "containers", i)
		r, err := parseImageRef(ct.Image)
		switch {
		case ct.Image == "":
			add("image is required")
		case err != nil:
			add("image %q: %v", ct.Image, err)
		}
		if ct.Digest != "" && !reDigest.MatchString(ct.Digest) {
			add("digest %q must be sha256: followed by 64 lowercase hex digits", ct.Digest)
		} else if ct.Digest != "" && r.Digest != "" && r.Digest != ct.Digest {
			add("digest %s conflicts with the image's @%s; give the digest once", ct.Digest, r.Digest)
		}
		if !reName.MatchString(ct.user()) {
			add("user %q is not a user name", ct.User)
		} else if !known[ct.user()] {
			add("user %q is neither root nor a user this run creates (add it to users, or a group that has it)", ct.User)
		}
	}
	seen := map[string]bool{}
	for i, r := range c.ContainerRegistries {
		add := itemErrs(&errs, "container_registries", i)
		switch {
		case r.Host == "":
			add("host is required")
		case !reRegistry.MatchString(r.Host):
			add("host %q must be host or host:port, as image references name the registry", r.Host)
		case seen[r.Host]:
			add("host %s is configured twice", r.Host)
		}
		seen[r.Host] = true
		for _, o := range [][2]string{{"username", r.Username}, {"password", r.Password}} {
			if msg := checkCredential(o[0], o[1]); msg != "" {
				add("%s", msg)
			}
		}
		if (r.Username == "") != (r.Password == "") {
			if r.Username == "" {
				add("password is set but username is not; give both or neither")
			} else {
				add("username is set but password is not; give both or neither")
			}
		}
	}
	return errs
}

// authFile is the containers-auth.json for host, nil without
// credentials.
func (c *Config) authFile(host string) []byte {
	r := c.registry(host)
	if r.Username == "" {
		return nil
	}
	b, _ := json.Marshal(map[string]any{"auths": map[string]any{host: map[string]string{
		"auth": base64.StdEncoding.EncodeToString([]byte(r.Username + ":" + r.Password)),
	}}})
	return b
}

// curlConfig is a curl config (-K) giving the registry's credentials,
// nil without: the password stays off the command line.
func (c *Config) curlConfig(host string) []byte {
	r := c.registry(host)
	if r.Username == "" {
		return nil
	}
	q := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(r.Username + ":" + r.Password)
	return []byte("user = \"" + q + "\"\n")
}

// containerAuthName is the staged auth file of registry host in the work
// dir (one per registry with credentials).
func containerAuthName(c *Config, host, kind string) string {
	i := slices.IndexFunc(c.ContainerRegistries, func(r ContainerRegistry) bool { return r.Host == host })
	return fmt.Sprintf("registry-%d.%s", i, kind)
}

// containerArchive is where container i's OCI archive lands (host mode).
func containerArchive(workDir string, i int) string {
	return path.Join(workDir, fmt.Sprintf("container-%d.tar", i))
}

// stepFetchContainers resolves every image's digest and checks it
// against its pin before any package work: the VM asks the registry
// (vm) or the plugin fetches the whole image into its cache and uploads
// it as an OCI archive (host).
func stepFetchContainers(ctx context.Context, s *state) error {
	c, p := s.cfg, s.plan
	s.say("containers: resolving and checking digests (content_source = " + c.contentSource() + ")")
	s.content.containerDigests = make([]string, len(p.Containers))
	if c.contentSource() == "host" {
		for i, ct := range p.Containers {
			what := fmt.Sprintf("containers[%d]", i)
			d, err := s.uploadContainer(ctx, what, ct, containerArchive(s.workDir, i))
			if err != nil {
				return err
			}
			s.content.containerDigests[i] = d
		}
		s.sayUnpinnedContainers()
		return nil
	}
	sc := newScript("content", "containers")
	for i, ct := range p.Containers {
		r := ct.ref()
		cfgFile := ""
		if cc := c.curlConfig(r.Registry); cc != nil {
			cfgFile = sc.secret(s.workDir, containerAuthName(c, r.Registry, "curl"), cc)
		}
		ref := r.Tag
		if ref == "" {
			ref = r.Digest
		}
		sc.call("fatimage_oci_resolve", fmt.Sprintf("containers[%d]", i), r.Registry, r.Repo, ref, r.Digest, flag01(c.registry(r.Registry).Insecure), cfgFile)
	}
	out, err := s.runScript(ctx, sc)
	if err != nil {
		return err
	}
	s.content.containerDigests = parseReports(out, "fatimage-container-digest", "containers", len(p.Containers), reDigest.MatchString)
	if err := requireReports(s.content.containerDigests, "containers", "the check did not report a digest"); err != nil {
		return err
	}
	s.sayUnpinnedContainers()
	return nil
}

// sayUnpinnedContainers warns about every image pinned by tag only (the
// built-in groups' mysql, opensearch, filebeat): what the tag gave is
// recorded, but nothing checked it.
func (s *state) sayUnpinnedContainers() {
	for i, ct := range s.plan.Containers {
		if ct.ref().Digest == "" {
			s.say(fmt.Sprintf("WARNING: containers[%d]: %s is pinned by tag only: the tag resolved to %s, not verified against a pinned digest (recorded in image.json; set digest to pin it)", i, ct.Image, s.content.containerDigests[i]))
		}
	}
}

// stepInstallContainers pulls (vm) or loads (host) every image into its
// user's storage by the digest checked before, then tags it.
func stepInstallContainers(ctx context.Context, s *state) error {
	c, p := s.cfg, s.plan
	s.say("containers: into the users' podman storage")
	sc := newScript("content", "containers")
	for i, ct := range p.Containers {
		r := ct.ref()
		what := fmt.Sprintf("containers[%d]", i)
		auth, archive := "", ""
		if c.contentSource() == "host" {
			archive = containerArchive(s.workDir, i)
		} else if a := c.authFile(r.Registry); a != nil {
			auth = sc.secret(s.workDir, containerAuthName(c, r.Registry, "json"), a)
		}
		sc.call("fatimage_podman_image", what, ct.user(), r.Name(), s.content.containerDigests[i], r.Tag, flag01(c.registry(r.Registry).Insecure), auth, archive)
	}
	_, err := s.runScript(ctx, sc)
	return err
}

// imageContainersRecord is image.json's content.containers.
func (s *state) imageContainersRecord() []imageContainer {
	var out []imageContainer
	for i, ct := range s.plan.Containers {
		d := ""
		if i < len(s.content.containerDigests) {
			d = s.content.containerDigests[i]
		}
		r := ct.ref()
		img := r.Name()
		if r.Tag != "" {
			img += ":" + r.Tag
		}
		out = append(out, imageContainer{Image: img, User: ct.user(), Digest: d})
	}
	return out
}
