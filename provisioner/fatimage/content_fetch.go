package fatimage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// Host-side fetching shared by every URL-based kind of content (binaries,
// downloads, ...): the plugin downloads a URL once into the
// content-addressed cache and uploads it, for VMs without internet.

// fetchItem is one file fetched by URL into the work dir.
type fetchItem struct {
	what string // names it in messages, e.g. "downloads[0]"
	url  string
	sum  string // sha256 (hex); "" (an explicit opt-out) is not checked
	dst  string // staged path in the work dir
}

// stageFetches puts every item into the work dir, downloaded by the VM
// (calls added to sc) or, when source is "host", by the plugin through
// its cache and uploaded, then adds the VM-side check of every sha256:
// all of it before anything is installed.
func (s *state) stageFetches(ctx context.Context, sc *vmScript, source string, items []fetchItem) error {
	sc.use("content")
	for _, it := range items {
		if source == "host" {
			if err := s.uploadCached(ctx, it.what, it.sum, it.url, it.dst); err != nil {
				return err
			}
			continue
		}
		sc.call("fatimage_fetch", it.what, it.url, it.dst)
	}
	for _, it := range items {
		if it.sum != "" {
			sc.call("fatimage_verify", it.what, strings.ToLower(it.sum), it.dst, it.url)
		}
	}
	return nil
}

// uploadCached makes sure the file with that sha256 is in the host cache
// (named by its sha256, so a cached file is known good), then uploads it
// to dst. what names the content in messages, e.g. "downloads[0]". An
// empty sum (an explicit opt-out of the check) downloads the file afresh
// and caches it under the sha256 it turns out to have.
func (s *state) uploadCached(ctx context.Context, what, sum, u, dst string) error {
	dir, err := binaryCacheDir()
	if err != nil {
		return fmt.Errorf("%s: cache: %w", what, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%s: cache: %w", what, err)
	}
	cached := filepath.Join(dir, strings.ToLower(sum))
	if _, err := os.Stat(cached); err == nil && sum != "" {
		s.ui.Say(fmt.Sprintf("fatimage: %s from the cache (%s)", strings.TrimPrefix(what, "binaries: "), cached))
	} else if cached, err = s.downloadVerified(ctx, what, sum, u, dir); err != nil {
		return err
	}
	f, err := os.Open(cached)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	body := s.ui.TrackProgress("upload "+path.Base(u), 0, st.Size(), f)
	defer body.Close()
	if err := s.comm.Upload(dst, body, nil); err != nil {
		return fmt.Errorf("%s: uploading: %w", what, err)
	}
	return nil
}

// downloadVerified fetches u into the cache dir, checks the sha256 (when
// one is given) and only then renames it to its content address, which
// it returns.
func (s *state) downloadVerified(ctx context.Context, what, sum, u, dir string) (string, error) {
	s.ui.Say(fmt.Sprintf("fatimage: downloading %s", u))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Minute}).Do(req)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: GET %s: %s", what, u, resp.Status)
	}
	tmp, err := os.CreateTemp(dir, ".download-*")
	if err != nil {
		return "", fmt.Errorf("%s: cache: %w", what, err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	body := s.ui.TrackProgress(path.Base(u), 0, resp.ContentLength, resp.Body)
	defer body.Close()
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(tmp, h), body); err != nil {
		return "", fmt.Errorf("%s: reading %s: %w", what, u, err)
	}
	got := hex.EncodeToString(h.Sum(nil))
	if sum != "" && !strings.EqualFold(got, sum) {
		return "", fmt.Errorf("%s: sha256 mismatch: want %s, got %s (%s); nothing installed", what, strings.ToLower(sum), got, u)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("%s: cache: %w", what, err)
	}
	cached := filepath.Join(dir, got)
	return cached, os.Rename(tmp.Name(), cached)
}
