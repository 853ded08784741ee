package sbom

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/httpretry"
)

// Parse reads a manifest_output file or an SBOM this package wrote,
// whichever data is.
func Parse(data []byte) (*Image, error) {
	if bytes.Contains(data[:min(len(data), 512)], []byte(`"bomFormat"`)) {
		return ParseCycloneDX(data)
	}
	return ParseManifest(data)
}

// Load reads a previous build's manifest or SBOM from a local path or
// an http(s) URL.
func Load(ctx context.Context, src string) (*Image, error) {
	var data []byte
	var err error
	if strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://") {
		data, err = fetch(ctx, src)
	} else {
		data, err = os.ReadFile(src)
	}
	if err != nil {
		return nil, err
	}
	img, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	return img, nil
}

func fetch(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	// a CI artefact store may throttle or blip: retry as the builder does
	client := &http.Client{Transport: &httpretry.Transport{}}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, 256<<20))
}
