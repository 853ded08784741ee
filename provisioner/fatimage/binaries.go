//go:generate packer-sdc struct-markdown

package fatimage

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
	"time"
)

// Binary is a release tarball whose executables go to /usr/local/bin.
type Binary struct {
	// Project name, e.g. node_exporter.
	Name string `mapstructure:"name" required:"true"`
	// Version without the leading v, e.g. 1.11.1.
	Version string `mapstructure:"version" required:"true"`
	// sha256 (hex) of <name>-<version>.linux-amd64.tar.gz.
	SHA256 string `mapstructure:"sha256" required:"true"`
	// Executables in the tarball to install. Default [name].
	Files []string `mapstructure:"files"`
}

// defaultBinarySource is where Prometheus publishes its releases.
const defaultBinarySource = "https://github.com/prometheus"

// tarballName is <name>-<version>.linux-amd64.tar.gz.
func (b Binary) tarballName() string {
	return fmt.Sprintf("%s-%s.linux-amd64.tar.gz", b.Name, b.Version)
}

// url is <source>/<name>/releases/download/v<version>/<tarball>.
func (b Binary) url(source string) string {
	return fmt.Sprintf("%s/%s/releases/download/v%s/%s", strings.TrimRight(source, "/"), b.Name, b.Version, b.tarballName())
}

func (b Binary) files() []string {
	if len(b.Files) > 0 {
		return b.Files
	}
	return []string{b.Name}
}

func validateBinaries(bins []Binary) []error {
	var errs []error
	seen := map[string]bool{}
	for i, b := range bins {
		if !reName.MatchString(b.Name) {
			errs = append(errs, fmt.Errorf("binaries[%d]: name %q is not valid", i, b.Name))
		}
		if seen[b.Name] {
			errs = append(errs, fmt.Errorf("binaries[%d]: duplicate binary %q", i, b.Name))
		}
		seen[b.Name] = true
		if b.Version == "" || strings.HasPrefix(b.Version, "v") || strings.ContainsAny(b.Version, "/ ") {
			errs = append(errs, fmt.Errorf("binaries[%d]: version %q must be like 1.2.3 (no leading v)", i, b.Version))
		}
		if h, err := hex.DecodeString(b.SHA256); err != nil || len(h) != sha256.Size {
			errs = append(errs, fmt.Errorf("binaries[%d]: sha256 must be 64 hex digits", i))
		}
		for _, f := range b.files() {
			if !reName.MatchString(f) {
				errs = append(errs, fmt.Errorf("binaries[%d]: file %q is not a plain executable name", i, f))
			}
		}
	}
	return errs
}

// fetchBinary downloads b's tarball, checks its sha256 and returns the
// wanted executables (name -> content), found one directory down.
func fetchBinary(ctx context.Context, client *http.Client, source string, b Binary) (map[string][]byte, error) {
	u := b.url(source)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("binaries: %s: %w", b.Name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("binaries: %s: GET %s: %s", b.Name, u, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<30))
	if err != nil {
		return nil, fmt.Errorf("binaries: %s: reading %s: %w", b.Name, u, err)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); !strings.EqualFold(got, b.SHA256) {
		return nil, fmt.Errorf("binaries: %s: sha256 of %s is %s, want %s", b.Name, b.tarballName(), got, b.SHA256)
	}
	return extractFiles(data, b.files())
}

// extractFiles returns the regular files named in want found at
// <one dir>/<name> in a gzipped tarball.
func extractFiles(tgz []byte, want []string) (map[string][]byte, error) {
	zr, err := gzip.NewReader(strings.NewReader(string(tgz)))
	if err != nil {
		return nil, fmt.Errorf("binaries: %w", err)
	}
	wanted := map[string]bool{}
	for _, w := range want {
		wanted[w] = true
	}
	out := map[string][]byte{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("binaries: %w", err)
		}
		name := path.Clean(h.Name)
		dir, base := path.Split(name)
		if h.Typeflag != tar.TypeReg || !wanted[base] || strings.Count(strings.Trim(dir, "/"), "/") != 0 || dir == "" {
			continue
		}
		data, err := io.ReadAll(io.LimitReader(tr, 1<<30))
		if err != nil {
			return nil, fmt.Errorf("binaries: %w", err)
		}
		out[base] = data
	}
	for _, w := range want {
		if _, ok := out[w]; !ok {
			return nil, fmt.Errorf("binaries: %s not found in the tarball", w)
		}
	}
	return out, nil
}

// stepBinaries fetches every binary (here, checked against its sha256)
// and installs its executables to /usr/local/bin (0755 root), skipping
// files already identical.
func (p *Provisioner) stepBinaries(ctx context.Context) error {
	client := &http.Client{Timeout: 10 * time.Minute}
	var s strings.Builder
	for _, b := range p.config.Binaries {
		files, err := fetchBinary(ctx, client, p.config.BinarySource, b)
		if err != nil {
			return err
		}
		for _, f := range b.files() {
			tmp := path.Join(p.workDir, "bin-"+f)
			if err := p.upload(tmp, files[f]); err != nil {
				return fmt.Errorf("binaries: uploading %s: %w", f, err)
			}
			dst := shQuote("/usr/local/bin/" + f)
			fmt.Fprintf(&s, "if cmp -s %s %s; then echo %s; else install -o root -g root -m 0755 %s %s; echo %s; fi\nrm -f %s\n",
				shQuote(tmp), dst, shQuote("unchanged /usr/local/bin/"+f+" ("+b.Name+" "+b.Version+")"),
				shQuote(tmp), dst, shQuote("installed /usr/local/bin/"+f+" ("+b.Name+" "+b.Version+")"), shQuote(tmp))
		}
	}
	_, err := p.runScript(ctx, "binaries", s.String())
	return err
}
