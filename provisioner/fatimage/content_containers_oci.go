package fatimage

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
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/fetch"
)

// Host-side fetching of container images (content_source = "host"): a
// small client of the registry API (the distribution spec: manifests and
// blobs, Basic or Bearer auth) fetching the image into the host cache as
// an OCI archive, the manifest bytes kept as served so `podman load` on
// the VM records the same digest as a pull would. Every request goes
// through internal/fetch (retries, credentials kept to the registry's
// origin); the blobs are fetched into its content-addressed cache, each
// checked against its digest, and copied into the archive from there.

// Manifest media types the client asks for.
const (
	mediaOCIManifest    = "application/vnd.oci.image.manifest.v1+json"
	mediaOCIIndex       = "application/vnd.oci.image.index.v1+json"
	mediaDockerManifest = "application/vnd.docker.distribution.manifest.v2+json"
	mediaDockerList     = "application/vnd.docker.distribution.manifest.list.v2+json"
)

// ociClient talks to one registry for one repository.
type ociClient struct {
	base     string // https://host or http://host
	repo     string
	reg      ContainerRegistry
	fetcher  *fetch.Fetcher
	token    string // Bearer token once a challenge was answered
	insecure bool
}

func newOCIClient(reg ContainerRegistry, repo string, f *fetch.Fetcher) *ociClient {
	host := reg.Host
	if host == "docker.io" {
		host = "registry-1.docker.io"
	}
	return &ociClient{base: "https://" + host, repo: repo, reg: reg, insecure: reg.Insecure, fetcher: f}
}

// auth is the header answering the registry: its token once a challenge
// was answered, else the configured Basic credentials, else none.
func (o *ociClient) auth() http.Header {
	req := &http.Request{Header: http.Header{}}
	switch {
	case o.token != "":
		req.Header.Set("Authorization", "Bearer "+o.token)
	case o.reg.Username != "":
		req.SetBasicAuth(o.reg.Username, o.reg.Password)
	}
	return req.Header
}

// get does a GET of the repository's path, answering an auth challenge
// once; an insecure registry that does not speak TLS is retried over
// plain HTTP, as podman does.
func (o *ociClient) get(ctx context.Context, p string, accept string) (*http.Response, error) {
	do := func() (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.base+"/v2/"+o.repo+"/"+p, nil)
		if err != nil {
			return nil, err
		}
		req.Header = o.auth()
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		return o.fetcher.Client().Do(req)
	}
	resp, err := do()
	if err != nil && o.insecure && strings.HasPrefix(o.base, "https://") {
		o.base = "http://" + strings.TrimPrefix(o.base, "https://")
		resp, err = do()
	}
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusUnauthorized && o.token == "" {
		ch := resp.Header.Get("WWW-Authenticate")
		if strings.HasPrefix(strings.ToLower(ch), "bearer ") {
			_ = resp.Body.Close() // the challenge body is not read; the retry opens its own
			if err := o.answer(ctx, ch); err != nil {
				return nil, err
			}
			return do()
		}
	}
	return resp, nil
}

var reChallengeParam = regexp.MustCompile(`(\w+)="([^"]*)"`)

// answer gets a pull token from a Bearer challenge's realm. The realm is
// the registry's word, so the credentials go there only over https or to
// the registry's own origin (see fetch.MaySendCredentials).
func (o *ociClient) answer(ctx context.Context, challenge string) error {
	params := map[string]string{}
	for _, m := range reChallengeParam.FindAllStringSubmatch(challenge, -1) {
		params[strings.ToLower(m[1])] = m[2]
	}
	realm, err := url.Parse(params["realm"])
	if err != nil || realm.Host == "" {
		return fmt.Errorf("the registry's auth challenge has no usable realm: %q", challenge)
	}
	q := realm.Query()
	q.Set("scope", "repository:"+o.repo+":pull")
	if params["service"] != "" {
		q.Set("service", params["service"])
	}
	realm.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, realm.String(), nil)
	if err != nil {
		return err
	}
	if o.reg.Username != "" {
		if base, _ := url.Parse(o.base); !fetch.MaySendCredentials(realm, base) {
			return fmt.Errorf("the registry's token service %s is plain http on another origin than %s: its credentials were not sent", realm.Host, o.base)
		}
		req.SetBasicAuth(o.reg.Username, o.reg.Password)
	}
	resp, err := o.fetcher.Client().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("token from %s: %s", realm.Host, resp.Status)
	}
	var tok struct {
		Token       string `json:"token"`
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil {
		return fmt.Errorf("token from %s: %w", realm.Host, err)
	}
	o.token = tok.Token
	if o.token == "" {
		o.token = tok.AccessToken
	}
	return nil
}

// manifest fetches the manifest at ref: its bytes, media type and digest
// (the sha256 of the bytes).
func (o *ociClient) manifest(ctx context.Context, ref string) ([]byte, string, string, error) {
	resp, err := o.get(ctx, "manifests/"+ref, strings.Join([]string{mediaOCIManifest, mediaOCIIndex, mediaDockerManifest, mediaDockerList}, ", "))
	if err != nil {
		return nil, "", "", err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusUnauthorized, http.StatusForbidden:
		return nil, "", "", fmt.Errorf("%s refused access to %s (%s): check container_registries' username and password", o.reg.Host, o.repo, resp.Status)
	default:
		return nil, "", "", fmt.Errorf("%s has no manifest %s:%s (%s)", o.reg.Host, o.repo, ref, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, "", "", err
	}
	h := sha256.Sum256(b)
	mt := strings.TrimSpace(strings.Split(resp.Header.Get("Content-Type"), ";")[0])
	var probe struct {
		MediaType string `json:"mediaType"`
	}
	if json.Unmarshal(b, &probe) == nil && probe.MediaType != "" {
		mt = probe.MediaType
	}
	return b, mt, "sha256:" + hex.EncodeToString(h[:]), nil
}

// ociDescriptor is a content descriptor of the OCI image spec.
type ociDescriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Platform    *ociPlatform      `json:"platform,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type ociPlatform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

// blob copies the blob b to w from the cache, fetching it there first
// (its size and digest checked), answering an auth challenge once.
func (o *ociClient) blob(ctx context.Context, b ociDescriptor, w io.Writer) error {
	get := func() (fetch.Result, error) {
		return o.fetcher.Get(ctx, fetch.Item{What: "blob " + b.Digest, URL: o.base + "/v2/" + o.repo + "/blobs/" + b.Digest,
			SHA256: strings.TrimPrefix(b.Digest, "sha256:"), Size: b.Size, Header: o.auth()})
	}
	r, err := get()
	var se *fetch.StatusError
	if errors.As(err, &se) && se.Response.StatusCode == http.StatusUnauthorized && o.token == "" {
		if ch := se.Response.Header.Get("WWW-Authenticate"); strings.HasPrefix(strings.ToLower(ch), "bearer ") {
			if err := o.answer(ctx, ch); err != nil {
				return err
			}
			r, err = get()
		}
	}
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

// uploadContainer resolves the image on the host, checks the pin, makes
// sure its OCI archive is in the cache (named by manifest digest and
// image name) and uploads it to dst; it returns the digest.
func (s *state) uploadContainer(ctx context.Context, what string, ct Container, dst string) (string, error) {
	r := ct.ref()
	cl := newOCIClient(s.cfg.registry(r.Registry), r.Repo, s.fetcher(s.cfg.registry(r.Registry).Insecure))
	ref := r.Tag
	if ref == "" {
		ref = r.Digest
	}
	s.ui.Say(fmt.Sprintf("fatimage: %s: resolving %s on the host", what, ct.Image))
	body, mt, digest, err := cl.manifest(ctx, ref)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	if r.Digest != "" && digest != r.Digest {
		return "", fmt.Errorf("%s: %s/%s:%s has digest %s, want %s; nothing installed", what, r.Registry, r.Repo, ref, digest, r.Digest)
	}
	if mt == mediaOCIIndex || mt == mediaDockerList {
		// podman keeps the digest of the platform's manifest for an
		// archive; the pin above was the list's
		if body, mt, err = cl.platformManifest(ctx, body); err != nil {
			return "", fmt.Errorf("%s: %w", what, err)
		}
	}
	root, err := fetch.CacheDir()
	if err != nil {
		return "", fmt.Errorf("%s: cache: %w", what, err)
	}
	dir := filepath.Join(filepath.Dir(root), "oci")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("%s: cache: %w", what, err)
	}
	name := r.Name()
	if r.Tag != "" {
		name += ":" + r.Tag
	}
	nh := sha256.Sum256([]byte(name))
	cached := filepath.Join(dir, strings.TrimPrefix(digest, "sha256:")+"-"+hex.EncodeToString(nh[:6])+".tar")
	if _, err := os.Stat(cached); err == nil {
		s.ui.Say(fmt.Sprintf("fatimage: %s from the cache (%s)", what, cached))
	} else if err := cl.writeArchive(ctx, body, mt, name, r.Tag != "", dir, cached); err != nil {
		return "", fmt.Errorf("%s: %w; nothing installed", what, err)
	}
	return digest, s.uploadFile(what, cached, name, dst)
}

// platformManifest picks linux/amd64 from an index.
func (o *ociClient) platformManifest(ctx context.Context, index []byte) ([]byte, string, error) {
	var idx struct {
		Manifests []ociDescriptor `json:"manifests"`
	}
	if err := json.Unmarshal(index, &idx); err != nil {
		return nil, "", err
	}
	for _, m := range idx.Manifests {
		if m.Platform != nil && m.Platform.OS == "linux" && m.Platform.Architecture == "amd64" {
			b, mt, d, err := o.manifest(ctx, m.Digest)
			if err == nil && d != m.Digest {
				err = fmt.Errorf("manifest %s arrived with digest %s", m.Digest, d)
			}
			return b, mt, err
		}
	}
	return nil, "", errors.New("the image index has no linux/amd64 manifest")
}

// writeArchive writes the OCI archive (oci-layout, index.json naming the
// image, the blobs) to a temporary file in dir, every blob checked, then
// renames it to cached.
func (o *ociClient) writeArchive(ctx context.Context, man []byte, mt, name string, tagged bool, dir, cached string) error {
	var m struct {
		Config ociDescriptor   `json:"config"`
		Layers []ociDescriptor `json:"layers"`
	}
	if err := json.Unmarshal(man, &m); err != nil || m.Config.Digest == "" {
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
	desc := ociDescriptor{MediaType: mt, Digest: "sha256:" + hex.EncodeToString(h[:]), Size: int64(len(man))}
	if tagged {
		// podman load names the image by these
		desc.Annotations = map[string]string{"org.opencontainers.image.ref.name": name, "io.containerd.image.name": name}
	}
	index, _ := json.Marshal(map[string]any{"schemaVersion": 2, "manifests": []ociDescriptor{desc}})
	if err := file("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return err
	}
	if err := file("index.json", index); err != nil {
		return err
	}
	if err := file("blobs/sha256/"+strings.TrimPrefix(desc.Digest, "sha256:"), man); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, b := range append([]ociDescriptor{m.Config}, m.Layers...) {
		if seen[b.Digest] {
			continue
		}
		seen[b.Digest] = true
		if !reDigest.MatchString(b.Digest) || b.Size < 0 {
			return fmt.Errorf("the manifest names blob %q", b.Digest)
		}
		if err := tw.WriteHeader(&tar.Header{Name: "blobs/sha256/" + strings.TrimPrefix(b.Digest, "sha256:"), Mode: 0o644, Size: b.Size, Typeflag: tar.TypeReg}); err != nil {
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
