package fatimage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
	"github.com/stackhpc/packer-plugin-fatimage/internal/fetch"
)

// Host-side fetching shared by every URL-based kind of content (binaries,
// downloads, RPMs, Grafana plugins, container blobs): the plugin
// downloads a URL once into the content-addressed cache (internal/fetch)
// and uploads it, for VMs without internet.

// fetchItem is one file fetched by URL into the work dir.
type fetchItem = content.URL

// stageFetches puts every item into the work dir, downloaded by the VM
// (calls added to sc) or, when source is "host", by the plugin through
// its cache and uploaded, then adds the VM-side check of every sha256:
// all of it before anything is installed.
func (s *state) stageFetches(ctx context.Context, sc *vmScript, source string, items []fetchItem) error {
	sc.use("content")
	for _, it := range items {
		if source == "host" {
			if err := s.uploadCached(ctx, it.What, it.SHA256, it.URL, it.Dst); err != nil {
				return err
			}
			continue
		}
		sc.call("fatimage_fetch", it.What, it.URL, it.Dst)
	}
	for _, it := range items {
		if it.SHA256 != "" {
			sc.call("fatimage_verify", it.What, strings.ToLower(it.SHA256), it.Dst, it.URL)
		}
	}
	return nil
}

// uploadCached makes sure the file with that sha256 is in the host cache
// (internal/fetch: retried, checked, content-addressed), then uploads it
// to dst. what names the content in messages, e.g. "downloads[0]". An
// empty sum (an explicit opt-out of the check) downloads the file afresh
// and caches it under the sha256 it turns out to have.
func (s *state) uploadCached(ctx context.Context, what, sum, u, dst string) error {
	r, err := s.fetcher(false).Get(ctx, fetch.Item{What: what, URL: u, SHA256: sum})
	var mismatch *fetch.MismatchError
	if errors.As(err, &mismatch) {
		return fmt.Errorf("%w; nothing installed", err)
	} else if err != nil {
		return err
	}
	if r.Cached {
		s.ui.Say(fmt.Sprintf("fatimage: %s from the cache (%s)", strings.TrimPrefix(what, "binaries: "), r.Path))
	}
	return s.uploadFile(what, r.Path, path.Base(u), dst)
}

// fetcher is the host's one fetch path, its progress lines said on the
// ui; insecure skips TLS verification (a registry marked insecure).
func (s *state) fetcher(insecure bool) *fetch.Fetcher {
	return fetch.New(fetch.Options{InsecureSkipVerify: insecure, Progress: func(l string) { s.ui.Say("fatimage: " + l) }})
}

// uploadFile uploads the local file to dst on the VM, its progress
// tracked as name.
func (s *state) uploadFile(what, local, name, dst string) error {
	f, err := os.Open(local)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	body := s.ui.TrackProgress("upload "+name, 0, st.Size(), f)
	defer body.Close()
	if err := s.comm.Upload(dst, body, nil); err != nil {
		return fmt.Errorf("%s: uploading: %w", what, err)
	}
	return nil
}
