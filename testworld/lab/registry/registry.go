// Package registry is the lab's OCI registry: Debian's real
// `docker-registry` (the CNCF distribution registry, what Docker Hub and
// most site registries run) serving small images the lab builds itself
// under the names and tags the appliance pulls (library/mysql:8.0.30,
// opensearchproject/opensearch:2.9.0, beats/filebeat-oss:7.12.1).
//
// The images are OCI image manifests with one gzip layer of a few text
// files, built deterministically (fixed times, no gzip header), so their
// digests are the same on every run; they are pushed over the registry's
// own API, only the blobs and tags it lacks. The storage lives in the
// lab's cache, so a second start pushes nothing. Plain HTTP, as a site's
// internal mirror often is: clients must treat it as insecure.
package registry

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/logtail"
)

// Image is one image the registry holds.
type Image struct {
	Name string // repository, e.g. "library/mysql"
	Tag  string // e.g. "8.0.30"
}

// Ref is "name:tag".
func (i Image) Ref() string { return i.Name + ":" + i.Tag }

// DefaultImages are the images the appliance pulls, at its tags.
func DefaultImages() []Image {
	return []Image{
		{Name: "library/mysql", Tag: "8.0.30"},
		{Name: "opensearchproject/opensearch", Tag: "2.9.0"},
		{Name: "beats/filebeat-oss", Tag: "7.12.1"},
	}
}

// Options configures Start.
type Options struct {
	// Host is the address to listen on (a free port is picked). Default
	// 127.0.0.1.
	Host string
	// Dir holds the registry's storage (kept across starts) and its
	// config. Required.
	Dir    string
	Images []Image // default DefaultImages()
	// Username and Password, when set, make the registry require them
	// (htpasswd basic auth, bcrypt) on every request.
	Username, Password string
	Logf               func(format string, args ...any)
}

// Server is a running registry.
type Server struct {
	host     string // host:port
	user, pw string
	cmd      *exec.Cmd
	done     chan struct{}
	images   []Image
	digests  map[string]string // "name:tag" -> manifest digest
	logTail  *logtail.Buffer   // the last lines the registry logged, for errors
}

// mediaTypes of what the lab pushes.
const (
	MediaManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaConfig   = "application/vnd.oci.image.config.v1+json"
	mediaLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"
)

// Start builds the images, starts docker-registry and pushes what its
// storage lacks.
func Start(o Options) (*Server, error) {
	if o.Dir == "" {
		return nil, errors.New("registry: Options.Dir is required")
	}
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if len(o.Images) == 0 {
		o.Images = DefaultImages()
	}
	if (o.Username == "") != (o.Password == "") {
		return nil, errors.New("registry: Username and Password go together")
	}
	bin, err := exec.LookPath("docker-registry")
	if err != nil {
		return nil, fmt.Errorf("registry: docker-registry is required (Debian package docker-registry): %w", err)
	}
	storage := filepath.Join(o.Dir, "storage")
	if err := os.MkdirAll(storage, 0o755); err != nil {
		return nil, err
	}
	port, err := freePort(o.Host)
	if err != nil {
		return nil, err
	}
	s := &Server{host: net.JoinHostPort(o.Host, port), user: o.Username, pw: o.Password,
		images: slices.Clone(o.Images), digests: map[string]string{}, done: make(chan struct{}), logTail: &logtail.Buffer{Max: 8 << 10}}
	// one config per instance: an open and an authenticated registry may
	// share the storage
	confDir, err := os.MkdirTemp(o.Dir, "conf-")
	if err != nil {
		return nil, err
	}
	conf := fmt.Sprintf("version: 0.1\nlog:\n  level: info\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: %s\n  delete:\n    enabled: false\nhttp:\n  addr: %s\n", storage, s.host)
	if o.Username != "" {
		hash, err := bcrypt.GenerateFromPassword([]byte(o.Password), bcrypt.DefaultCost)
		if err != nil {
			return nil, err
		}
		htpasswd := filepath.Join(confDir, "htpasswd")
		if err := os.WriteFile(htpasswd, []byte(o.Username+":"+string(hash)+"\n"), 0o600); err != nil {
			return nil, err
		}
		conf += fmt.Sprintf("auth:\n  htpasswd:\n    realm: lab-registry\n    path: %s\n", htpasswd)
	}
	confFile := filepath.Join(confDir, "config.yml")
	if err := os.WriteFile(confFile, []byte(conf), 0o600); err != nil {
		return nil, err
	}
	s.cmd = exec.Command(bin, "serve", confFile)
	// the registry dies with the lab, even when the lab is killed
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	s.cmd.Env = append(os.Environ(), "OTEL_TRACES_EXPORTER=none")
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	s.cmd.Stdout = s.logTail
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("registry: starting docker-registry: %w", err)
	}
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := false
		for sc.Scan() {
			_, _ = s.logTail.Write([]byte(sc.Text() + "\n")) // an in-memory tail: never fails
			if !once && strings.Contains(sc.Text(), "listening on") {
				once = true
				close(listening)
			}
		}
	}()
	go func() {
		s.cmd.Wait() //nolint:errcheck // exit status shown through logTail
		close(s.done)
	}()
	select {
	case <-listening:
	case <-s.done:
		return nil, fmt.Errorf("registry: docker-registry exited at start:\n%s", s.logTail.String())
	case <-time.After(30 * time.Second):
		s.Close()
		return nil, fmt.Errorf("registry: docker-registry did not listen within 30s:\n%s", s.logTail.String())
	}
	pushed := 0
	for _, img := range s.images {
		n, digest, err := s.push(img)
		if err != nil {
			s.Close()
			return nil, err
		}
		pushed += n
		s.digests[img.Ref()] = digest
	}
	o.Logf("registry: serving %d images at %s (auth: %v; %d blobs pushed)", len(s.images), s.host, o.Username != "", pushed)
	return s, nil
}

func freePort(host string) (string, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", fmt.Errorf("registry: %w", err)
	}
	defer ln.Close()
	_, port, err := net.SplitHostPort(ln.Addr().String())
	return port, err
}

// Host is "host:port", how image references name the registry.
func (s *Server) Host() string { return s.host }

// URL is "http://host:port".
func (s *Server) URL() string { return "http://" + s.host }

// Digest is the manifest digest of "name:tag", "" if not served.
func (s *Server) Digest(ref string) string { return s.digests[ref] }

// Images are the served images.
func (s *Server) Images() []Image { return slices.Clone(s.images) }

// Close stops the registry.
func (s *Server) Close() error {
	if s.cmd == nil || s.cmd.Process == nil {
		return nil
	}
	select {
	case <-s.done:
		return nil
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	return nil
}

// blob is content and its digest.
type blob struct {
	data   []byte
	digest string
}

func newBlob(b []byte) blob {
	h := sha256.Sum256(b)
	return blob{b, "sha256:" + hex.EncodeToString(h[:])}
}

// build returns an image's manifest, config and layer, deterministically.
func build(img Image) (manifest, config, layer blob, err error) {
	files := map[string]string{
		"etc/lab-image":  img.Ref() + "\n",
		"etc/os-release": "NAME=\"lab image\"\nID=lab\nVERSION_ID=" + img.Tag + "\n",
		"README":         "Lab stand-in for " + img.Ref() + ": a few files, nothing to run.\n",
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var tarBuf bytes.Buffer
	tw := tar.NewWriter(&tarBuf)
	epoch := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	if err = tw.WriteHeader(&tar.Header{Name: "etc/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX}); err != nil {
		return
	}
	for _, n := range names {
		if err = tw.WriteHeader(&tar.Header{Name: n, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(files[n])), ModTime: epoch, Format: tar.FormatPAX}); err != nil {
			return
		}
		if _, err = tw.Write([]byte(files[n])); err != nil {
			return
		}
	}
	if err = tw.Close(); err != nil {
		return
	}
	diffID := newBlob(tarBuf.Bytes()).digest
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if _, err = zw.Write(tarBuf.Bytes()); err != nil {
		return
	}
	if err = zw.Close(); err != nil {
		return
	}
	layer = newBlob(gz.Bytes())
	cfg, err := json.Marshal(map[string]any{
		"architecture": "amd64",
		"os":           "linux",
		"created":      epoch.Format(time.RFC3339),
		"config":       map[string]any{"Cmd": []string{"/bin/false"}, "Labels": map[string]string{"lab.image": img.Ref()}},
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{diffID}},
	})
	if err != nil {
		return
	}
	config = newBlob(cfg)
	man, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     MediaManifest,
		"config":        map[string]any{"mediaType": mediaConfig, "digest": config.digest, "size": len(config.data)},
		"layers":        []any{map[string]any{"mediaType": mediaLayer, "digest": layer.digest, "size": len(layer.data)}},
	})
	if err != nil {
		return
	}
	manifest = newBlob(man)
	return
}

// request does one registry API call with the server's credentials.
func (s *Server) request(method, u string, body []byte, header map[string]string) (*http.Response, error) {
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if s.user != "" {
		req.SetBasicAuth(s.user, s.pw)
	}
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// push uploads img's blobs the registry lacks and tags its manifest;
// it returns how many blobs it pushed and the manifest digest.
func (s *Server) push(img Image) (int, string, error) {
	manifest, config, layer, err := build(img)
	if err != nil {
		return 0, "", err
	}
	base := s.URL() + "/v2/" + img.Name
	n := 0
	for _, b := range []blob{config, layer} {
		resp, err := s.request(http.MethodHead, base+"/blobs/"+b.digest, nil, nil)
		if err != nil {
			return n, "", fmt.Errorf("registry: %w", err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			continue
		}
		resp, err = s.request(http.MethodPost, base+"/blobs/uploads/", nil, nil)
		if err != nil {
			return n, "", fmt.Errorf("registry: %w", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			return n, "", fmt.Errorf("registry: starting an upload to %s: %s", img.Name, resp.Status)
		}
		loc, err := resp.Location()
		if err != nil {
			return n, "", fmt.Errorf("registry: upload location: %w", err)
		}
		q := loc.Query()
		q.Set("digest", b.digest)
		loc.RawQuery = q.Encode()
		resp, err = s.request(http.MethodPut, loc.String(), b.data, map[string]string{"Content-Type": "application/octet-stream"})
		if err != nil {
			return n, "", fmt.Errorf("registry: %w", err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			return n, "", fmt.Errorf("registry: uploading %s to %s: %s: %s", b.digest, img.Name, resp.Status, msg)
		}
		n++
	}
	resp, err := s.request(http.MethodPut, base+"/manifests/"+url.PathEscape(img.Tag), manifest.data, map[string]string{"Content-Type": MediaManifest})
	if err != nil {
		return n, "", fmt.Errorf("registry: %w", err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return n, "", fmt.Errorf("registry: tagging %s: %s: %s", img.Ref(), resp.Status, msg)
	}
	if got := resp.Header.Get("Docker-Content-Digest"); got != manifest.digest {
		return n, "", fmt.Errorf("registry: %s stored as %s, want %s", img.Ref(), got, manifest.digest)
	}
	return n, manifest.digest, nil
}

// ManifestDigest fetches name's manifest at ref (tag or digest) as a
// client would and returns the sha256 of its bytes.
func (s *Server) ManifestDigest(name, ref string) (string, error) {
	resp, err := s.request(http.MethodGet, s.URL()+"/v2/"+name+"/manifests/"+ref, nil, map[string]string{"Accept": MediaManifest})
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("registry: GET %s manifest %s: %s", name, ref, resp.Status)
	}
	return newBlob(body).digest, nil
}
