package sbom

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/httpretry"
)

// ErrNotFound is a previous record's URL answering 404, as a missing
// local file is fs.ErrNotExist: there is no previous image.
var ErrNotFound = errors.New("not found")

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
		return nil, fmt.Errorf("%s: %w", Display(src), err)
	}
	return img, nil
}

// Display is src as logs and reports show it: a URL without its user
// information, query and fragment, where a CI store's token may travel.
func Display(src string) string {
	u, err := neturl.Parse(src)
	if err != nil || u.Host == "" {
		return src
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

func fetch(ctx context.Context, src string) ([]byte, error) {
	url := Display(src)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: invalid URL", url)
	}
	// a CI artefact store may throttle or blip: retry as the builder does
	client := &http.Client{Transport: &httpretry.Transport{}}
	resp, err := client.Do(req)
	if err != nil {
		var ue *neturl.Error
		if errors.As(err, &ue) {
			err = ue.Err // its URL is the full one
		}
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil, fmt.Errorf("GET %s: %w", url, ErrNotFound)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, 256<<20))
}
