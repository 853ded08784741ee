package containers

import (
	"context"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
)

// Kind is the containers kind.
type Kind struct{}

var (
	_ content.Kind[Container]     = Kind{}
	_ content.Fetcher[Container]  = Kind{}
	_ content.Recorder[Container] = Kind{}
)

//go:embed containers.sh
var shell string

// Option implements content.Kind.
func (Kind) Option() string { return "containers" }

// ID is the user and the image: a template entry for them replaces a
// group's.
func (Kind) ID(c Container) string { return "image " + c.UserOrRoot() + " " + c.Image }

// Shell implements content.Kind: containers.sh.
func (Kind) Shell() string { return shell }

// Validate checks each image without network or VM; whether its user
// exists is the plan's to say (the users a run creates).
func (Kind) Validate(cs []Container) []error {
	var errs []error
	for i, ct := range cs {
		add := content.ItemErrs(&errs, "containers", i)
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
		if !ValidUser(ct.UserOrRoot()) {
			add("user %q is not a user name", ct.User)
		}
	}
	return errs
}

// ValidUser reports whether u is a user name.
func ValidUser(u string) bool { return !strings.Contains(u, ":") && content.ValidOwner(u) }

// ValidateRegistries checks container_registries.
func ValidateRegistries(rs []content.Registry) []error {
	var errs []error
	seen := map[string]bool{}
	for i, r := range rs {
		add := content.ItemErrs(&errs, "container_registries", i)
		switch {
		case r.Host == "":
			add("host is required")
		case !ValidRegistry(r.Host):
			add("host %q must be host or host:port, as image references name the registry", r.Host)
		case seen[r.Host]:
			add("host %s is configured twice", r.Host)
		}
		seen[r.Host] = true
		for _, o := range [][2]string{{"username", r.Username}, {"password", r.Password}} {
			if msg := content.CheckCredential(o[0], o[1]); msg != "" {
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

// AuthFile is the containers-auth.json for r, nil without credentials.
func AuthFile(r content.Registry) []byte {
	if r.Username == "" {
		return nil
	}
	b, _ := json.Marshal(map[string]any{"auths": map[string]any{r.Host: map[string]string{
		"auth": base64.StdEncoding.EncodeToString([]byte(r.Username + ":" + r.Password)),
	}}})
	return b
}

// CurlConfig is a curl config (-K) giving r's credentials, nil without:
// the password stays off the command line.
func CurlConfig(r content.Registry) []byte {
	if r.Username == "" {
		return nil
	}
	q := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(r.Username + ":" + r.Password)
	return []byte("user = \"" + q + "\"\n")
}

// secretName is the file of registry host's credentials among the
// script's secrets (one per registry with credentials); kind is curl or
// json.
func secretName(rs []content.Registry, host, kind string) string {
	i := slices.IndexFunc(rs, func(r content.Registry) bool { return r.Host == host })
	return fmt.Sprintf("registry-%d.%s", i, kind)
}

// Archive is where container i's OCI archive lands (content_source =
// "host").
func Archive(workDir string, i int) string {
	return path.Join(workDir, fmt.Sprintf("container-%d.tar", i))
}

// what names container i in messages.
func what(i int) string { return fmt.Sprintf("containers[%d]", i) }

// Fetch resolves every image's digest and checks it against its pin
// before any package work: the VM asks the registry (vm) or the plugin
// fetches the whole image into its cache and uploads it as an OCI
// archive (host), its digests then being the fetch's Reports. An image
// pinned by tag only is warned about with the digest the tag gave.
func (Kind) Fetch(ctx context.Context, env content.Env, cs []Container) (content.Fetch, error) {
	f := content.Fetch{
		Check: func(out string) error {
			return content.RequireReports(ParseDigests(out, len(cs)), "containers", "the check did not report a digest")
		},
		Warn: func(out string) []string { return unpinned(cs, ParseDigests(out, len(cs))) },
	}
	say := "containers: resolving and checking digests (content_source = " + env.Source + ")"
	if env.Source == "host" {
		// said before the host's work, which shows its own progress
		env.Say(say)
		return f, hostFetch(ctx, env, cs, &f)
	}
	f.Script.Say, f.Script.Bodies = say, []string{"content"}
	for i, ct := range cs {
		r := ct.ref()
		cfgFile := ""
		if cc := CurlConfig(content.RegistryOf(env.Registries, r.Registry)); cc != nil {
			cfgFile = f.Script.Secret(env, secretName(env.Registries, r.Registry, "curl"), cc)
		}
		ref := r.Tag
		if ref == "" {
			ref = r.Digest
		}
		f.Script.Call("fatimage_oci_resolve", what(i), r.Registry, r.Repo, ref, r.Digest, content.Flag(content.RegistryOf(env.Registries, r.Registry).Insecure), cfgFile)
	}
	return f, nil
}

// hostFetch puts every image's archive, fetched into the host cache and
// checked, among f's uploads and its digest among f's reports.
func hostFetch(ctx context.Context, env content.Env, cs []Container, f *content.Fetch) error {
	var reports strings.Builder
	for i, ct := range cs {
		cached, name, digest, err := hostArchive(ctx, env.Say, what(i), ct, content.RegistryOf(env.Registries, ct.ref().Registry))
		if err != nil {
			return err
		}
		f.Uploads = append(f.Uploads, content.Upload{What: what(i), Path: cached, Dst: Archive(env.WorkDir, i), Name: name})
		fmt.Fprintf(&reports, "%s %s %s\n", digestMarker, what(i), digest)
	}
	f.Reports = reports.String()
	return nil
}

// digestMarker starts the line reporting the digest an image resolved
// to (fatimage_oci_resolve's, and the host fetch's).
const digestMarker = "fatimage-container-digest"

// ParseDigests reads the digests n images resolved to.
func ParseDigests(out string, n int) []string {
	return content.Reports(out, digestMarker, "containers", n, reDigest.MatchString)
}

// unpinned warns about every image pinned by tag only (the built-in
// groups' mysql, opensearch, filebeat): what the tag gave is recorded,
// but nothing checked it.
func unpinned(cs []Container, digests []string) []string {
	var out []string
	for i, ct := range cs {
		if ct.ref().Digest == "" {
			out = append(out, fmt.Sprintf("%s: %s is pinned by tag only: the tag resolved to %s, not verified against a pinned digest (recorded in image.json; set digest to pin it)", what(i), ct.Image, digests[i]))
		}
	}
	return out
}

// Install pulls (vm) or loads (host) every image into its user's
// storage by the digest its fetch checked, then tags it.
func (Kind) Install(env content.Env, cs []Container) (content.Script, error) {
	sc := content.Script{Say: "containers: into the users' podman storage", Bodies: []string{"content"}}
	digests := ParseDigests(env.Fetched, len(cs))
	if err := content.RequireReports(digests, "containers", "the check did not report a digest"); err != nil {
		return sc, err
	}
	for i, ct := range cs {
		r := ct.ref()
		reg := content.RegistryOf(env.Registries, r.Registry)
		auth, archive := "", ""
		if env.Source == "host" {
			archive = Archive(env.WorkDir, i)
		} else if a := AuthFile(reg); a != nil {
			auth = sc.Secret(env, secretName(env.Registries, r.Registry, "json"), a)
		}
		sc.Call("fatimage_podman_image", what(i), ct.UserOrRoot(), r.Name(), digests[i], r.Tag, content.Flag(reg.Insecure), auth, archive)
	}
	return sc, nil
}

// Record is a container image in image.json.
type Record struct {
	Image  string `json:"image"`
	User   string `json:"user"`
	Digest string `json:"digest"`
}

// Record is image.json's containers, in the order configured, with the
// digest each resolved to.
func (Kind) Record(env content.Env, cs []Container) (map[string]any, error) {
	if len(cs) == 0 {
		return nil, nil
	}
	digests := ParseDigests(env.Fetched, len(cs))
	out := make([]Record, 0, len(cs))
	for i, ct := range cs {
		r := ct.ref()
		img := r.Name()
		if r.Tag != "" {
			img += ":" + r.Tag
		}
		out = append(out, Record{Image: img, User: ct.UserOrRoot(), Digest: digests[i]})
	}
	return map[string]any{"containers": out}, nil
}
