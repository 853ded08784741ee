package containers

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
	"github.com/stackhpc/packer-plugin-fatimage/internal/fetch"
	"github.com/stackhpc/packer-plugin-fatimage/internal/httpretry"
	"github.com/stackhpc/packer-plugin-fatimage/internal/redact"
)

// Host-side fetching of container images (content_source = "host"):
// go-containerregistry speaks the registry API (the ping, Basic or Bearer
// auth and the token exchange, manifests checked against the digest they
// were asked by); the image goes into the host cache as an OCI archive,
// the manifest bytes kept as served so `podman load` on the VM records
// the same digest as a pull would. Requests are retried as every host
// fetch is (internal/fetch's transport), the blobs are fetched through
// internal/fetch into its content-addressed cache, each checked against
// its digest, and copied into the archive from there. registryGuard keeps
// the credentials to the registry's origin.

// ociClient talks to one registry for one repository.
type ociClient struct {
	host  string // as image references name it
	repo  name.Repository
	rt    http.RoundTripper // go-containerregistry's: authenticated
	blobs *fetch.Fetcher
}

// newOCIClient pings the registry and answers its auth challenge with
// the registry's credentials: container_registries', else what the
// standard credential files and helpers hold for it.
func newOCIClient(ctx context.Context, reg content.Registry, repo string, progress func(string)) (*ociClient, error) {
	var opts []name.Option
	if reg.Insecure {
		opts = append(opts, name.Insecure)
	}
	host := reg.Host
	r, err := name.NewRepository(host+"/"+repo, opts...)
	if err != nil {
		return nil, err
	}
	auth, hasCreds, err := registryAuth(ctx, reg, r)
	if err != nil {
		return nil, err
	}
	base := fetch.New(fetch.Options{InsecureSkipVerify: reg.Insecure}).Client().Transport // retried
	g := &registryGuard{next: base, host: r.RegistryStr(), insecure: reg.Insecure, hasCreds: hasCreds}
	rt, err := transport.NewWithContext(ctx, r.Registry, auth, g, []string{r.Scope(transport.PullScope)})
	if err != nil {
		return nil, explainRegistryErr(host, repo, "", err)
	}
	// the transport below already retries: one attempt at this level
	blobs := fetch.New(fetch.Options{Base: rt, Retry: httpretry.Transport{Attempts: 1}, Progress: progress})
	return &ociClient{host: host, repo: r, rt: rt, blobs: blobs}, nil
}

// registryAuth is the registry's credentials and whether there are any:
// container_registries' username and password, else those the standard
// files and helpers (docker's config.json and credential helpers,
// podman's auth.json) give for the registry, registered as secrets.
func registryAuth(ctx context.Context, reg content.Registry, r name.Repository) (authn.Authenticator, bool, error) {
	if reg.Username != "" {
		return authn.FromConfig(authn.AuthConfig{Username: reg.Username, Password: reg.Password}), true, nil
	}
	a, err := authn.Resolve(ctx, authn.DefaultKeychain, r)
	if err != nil {
		return nil, false, fmt.Errorf("reading the credentials for %s from the docker or podman configuration: %w", reg.Host, err)
	}
	cfg, err := authn.Authorization(ctx, a)
	if err != nil {
		return nil, false, fmt.Errorf("reading the credentials for %s from the docker or podman configuration: %w", reg.Host, err)
	}
	redact.AddBasic(cfg.Username, cfg.Password)
	redact.Add(cfg.Auth, cfg.IdentityToken, cfg.RegistryToken)
	has := *cfg != authn.AuthConfig{}
	return authn.FromConfig(*cfg), has, nil
}

// explainRegistryErr says what the registry's answer means; ref is the
// manifest asked for, "" while connecting.
func explainRegistryErr(host, repo, ref string, err error) error {
	var re *realmError
	if errors.As(err, &re) {
		return re
	}
	var te *transport.Error
	if !errors.As(err, &te) {
		return err
	}
	status := fmt.Sprintf("%d %s", te.StatusCode, http.StatusText(te.StatusCode))
	switch {
	case te.StatusCode == http.StatusUnauthorized || te.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%s refused access to %s (%s): check container_registries' username and password, or the registry's entry in the docker or podman credentials", host, repo, status)
	case ref != "":
		return fmt.Errorf("%s has no manifest %s:%s (%s)", host, repo, ref, status)
	}
	return err
}

// manifest fetches the manifest at ref (a tag or a digest): its bytes,
// media type and digest (the sha256 of the bytes).
func (o *ociClient) manifest(ctx context.Context, ref string) ([]byte, string, string, error) {
	var nr name.Reference
	var err error
	if strings.HasPrefix(ref, "sha256:") {
		nr, err = name.NewDigest(o.repo.Name()+"@"+ref, name.WeakValidation)
	} else {
		nr, err = name.NewTag(o.repo.Name()+":"+ref, name.WeakValidation)
	}
	if err != nil {
		return nil, "", "", err
	}
	d, err := remote.Get(nr, remote.WithTransport(o.rt), remote.WithContext(ctx))
	if err != nil {
		return nil, "", "", explainRegistryErr(o.host, o.repo.RepositoryStr(), ref, err)
	}
	mt := string(d.MediaType)
	var probe struct {
		MediaType string `json:"mediaType"`
	}
	if json.Unmarshal(d.Manifest, &probe) == nil && probe.MediaType != "" {
		mt = probe.MediaType
	}
	return d.Manifest, mt, d.Digest.String(), nil
}

// blob copies the blob b to w from the cache, fetching it there first
// (its size and digest checked).
func (o *ociClient) blob(ctx context.Context, b v1.Descriptor, w io.Writer) error {
	r, err := o.blobs.Get(ctx, fetch.Item{What: "blob " + b.Digest.String(),
		URL:    o.repo.Scheme() + "://" + o.repo.RegistryStr() + "/v2/" + o.repo.RepositoryStr() + "/blobs/" + b.Digest.String(),
		SHA256: b.Digest.Hex, Size: b.Size})
	if err != nil {
		return err
	}
	f, err := os.Open(r.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// hostArchive resolves the image on the host, checks the pin and makes
// sure its OCI archive is in the cache (named by manifest digest and
// image name): it returns the archive, the image's name and its digest.
func hostArchive(ctx context.Context, say func(string), what string, ct Container, reg content.Registry) (cached, name, digest string, err error) {
	r := ct.ref()
	ref := r.Tag
	if ref == "" {
		ref = r.Digest
	}
	say(fmt.Sprintf("%s: resolving %s on the host", what, ct.Image))
	cl, err := newOCIClient(ctx, reg, r.Repo, say)
	if err != nil {
		return "", "", "", fmt.Errorf("%s: %w", what, err)
	}
	body, mt, digest, err := cl.manifest(ctx, ref)
	if err != nil {
		return "", "", "", fmt.Errorf("%s: %w", what, err)
	}
	if r.Digest != "" && digest != r.Digest {
		return "", "", "", fmt.Errorf("%s: %s/%s:%s has digest %s, want %s; nothing installed", what, r.Registry, r.Repo, ref, digest, r.Digest)
	}
	if types.MediaType(mt).IsIndex() {
		// podman keeps the digest of the platform's manifest for an
		// archive; the pin above was the list's
		if body, mt, err = cl.platformManifest(ctx, body); err != nil {
			return "", "", "", fmt.Errorf("%s: %w", what, err)
		}
	}
	name = r.Name()
	if r.Tag != "" {
		name += ":" + r.Tag
	}
	cached, err = cl.cachedArchive(ctx, say, what, body, mt, name, r.Tag != "", digest)
	return cached, name, digest, err
}

// cachedArchive is the image's archive in the cache, written there
// first when missing.
func (o *ociClient) cachedArchive(ctx context.Context, say func(string), what string, body []byte, mt, name string, tagged bool, digest string) (string, error) {
	root, err := fetch.CacheDir()
	if err != nil {
		return "", fmt.Errorf("%s: cache: %w", what, err)
	}
	dir := filepath.Join(filepath.Dir(root), "oci")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("%s: cache: %w", what, err)
	}
	nh := sha256.Sum256([]byte(name))
	cached := filepath.Join(dir, strings.TrimPrefix(digest, "sha256:")+"-"+hex.EncodeToString(nh[:6])+".tar")
	if _, err := os.Stat(cached); err == nil {
		say(fmt.Sprintf("%s from the cache (%s)", what, cached))
	} else if err := o.writeArchive(ctx, body, mt, name, tagged, dir, cached); err != nil {
		return "", fmt.Errorf("%s: %w; nothing installed", what, err)
	}
	return cached, nil
}

// platformManifest picks linux/amd64 from an index; go-containerregistry
// checks it has the digest the index names.
func (o *ociClient) platformManifest(ctx context.Context, index []byte) ([]byte, string, error) {
	idx, err := v1.ParseIndexManifest(strings.NewReader(string(index)))
	if err != nil {
		return nil, "", err
	}
	for _, m := range idx.Manifests {
		if m.Platform != nil && m.Platform.OS == "linux" && m.Platform.Architecture == "amd64" {
			b, mt, _, err := o.manifest(ctx, m.Digest.String())
			return b, mt, err
		}
	}
	return nil, "", errors.New("the image index has no linux/amd64 manifest")
}

// writeArchive writes the OCI archive (oci-layout, index.json naming the
// image, the blobs) to a temporary file in dir, every blob checked, then
// renames it to cached.
func (o *ociClient) writeArchive(ctx context.Context, man []byte, mt, name string, tagged bool, dir, cached string) error {
	m, err := v1.ParseManifest(strings.NewReader(string(man)))
	if err != nil || m.Config.Digest.Hex == "" {
		return fmt.Errorf("the manifest (%s) is not an image manifest", mt)
	}
	tmp, err := os.CreateTemp(dir, ".image-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	tw := tar.NewWriter(tmp)
	file := func(n string, b []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := tw.Write(b)
		return err
	}
	h := sha256.Sum256(man)
	desc := v1.Descriptor{MediaType: types.MediaType(mt), Digest: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(h[:])}, Size: int64(len(man))}
	if tagged {
		// podman load names the image by these
		desc.Annotations = map[string]string{"org.opencontainers.image.ref.name": name, "io.containerd.image.name": name}
	}
	index, _ := json.Marshal(v1.IndexManifest{SchemaVersion: 2, Manifests: []v1.Descriptor{desc}})
	if err := file("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return err
	}
	if err := file("index.json", index); err != nil {
		return err
	}
	if err := file("blobs/sha256/"+desc.Digest.Hex, man); err != nil {
		return err
	}
	seen := map[v1.Hash]bool{}
	for _, b := range append([]v1.Descriptor{m.Config}, m.Layers...) {
		if seen[b.Digest] {
			continue
		}
		seen[b.Digest] = true
		if !reDigest.MatchString(b.Digest.String()) || b.Size < 0 {
			return fmt.Errorf("the manifest names blob %q", b.Digest)
		}
		if err := tw.WriteHeader(&tar.Header{Name: "blobs/sha256/" + b.Digest.Hex, Mode: 0o644, Size: b.Size, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if err := o.blob(ctx, b, tw); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), cached)
}
