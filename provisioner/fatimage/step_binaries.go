package fatimage

import (
	"context"
	"fmt"
	"path"
)

// The monitoring binaries are downloads: fetched, checked and cached as
// every download is (content_fetch.go, scripts/content.sh), then their
// executables installed from the archive (scripts/download.sh). Only
// binary_source, not content_source, says who fetches them.

// tarball is where b's tarball is staged in the work dir.
func (b Binary) tarball(workDir string) string {
	return path.Join(workDir, "bin-"+b.Name+".tar.gz")
}

// what names b in messages.
func (b Binary) what() string { return "binaries: " + b.Name + " " + b.Version }

// binaryFetches are the binaries as downloads to stage and check.
func binaryFetches(bins []Binary, workDir, baseURL string) []fetchItem {
	var items []fetchItem
	for _, b := range bins {
		u, _ := b.downloadURL(baseURL)
		items = append(items, fetchItem{What: b.what(), URL: u, SHA256: b.SHA256, Dst: b.tarball(workDir)})
	}
	return items
}

// stepFetchBinaries stages every tarball in the work dir and checks its
// sha256 on the VM, all before anything is installed.
func stepFetchBinaries(ctx context.Context, s *state) error {
	c, p := s.cfg, s.plan
	s.say(fmt.Sprintf("fetching %d binaries (binary_source = %s)", len(p.binaries), c.BinarySource))
	sc := newScript("content")
	if err := s.stageFetches(ctx, sc, c.BinarySource, binaryFetches(p.binaries, s.workDir, c.ReleaseBaseURL)); err != nil {
		return err
	}
	sc.call("echo", "binaries: all checksums match")
	_, err := s.runScript(ctx, sc)
	return err
}

// scriptInstallBinaries installs each checked tarball's executables.
func scriptInstallBinaries(bins []Binary, workDir string) *vmScript {
	sc := newScript("content", "download")
	for _, b := range bins {
		sc.call("fatimage_download_files", append([]string{b.what(), b.tarball(workDir), b.Destination, b.Mode}, b.Files...)...)
	}
	return sc
}

// stepInstallBinaries installs the checked tarballs' executables.
func stepInstallBinaries(ctx context.Context, s *state) error {
	s.say("installing binaries")
	_, err := s.runScript(ctx, scriptInstallBinaries(s.plan.binaries, s.workDir))
	return err
}
