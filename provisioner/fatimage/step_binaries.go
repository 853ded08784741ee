package fatimage

import (
	"context"
	"fmt"
	"path"
	"strings"
)

// The monitoring binaries are downloads: fetched, checked and cached as
// every download is (content_fetch.go, content/common.sh), then their
// executables installed from the archive (content/download.sh). Only
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
		items = append(items, fetchItem{what: b.what(), url: u, sum: b.SHA256, dst: b.tarball(workDir)})
	}
	return items
}

// stepFetchBinaries stages every tarball in the work dir and checks its
// sha256 on the VM, all before anything is installed.
func stepFetchBinaries(ctx context.Context, s *state) error {
	c, p := s.cfg, s.plan
	s.say(fmt.Sprintf("fetching %d binaries (binary_source = %s)", len(p.binaries), c.BinarySource))
	var sb strings.Builder
	sb.WriteString(contentCommonSh)
	if err := s.stageFetches(ctx, &sb, c.BinarySource, binaryFetches(p.binaries, s.workDir, c.ReleaseBaseURL)); err != nil {
		return err
	}
	sb.WriteString("echo 'binaries: all checksums match'\n")
	_, err := s.runScript(ctx, rawScript(sb.String()))
	return err
}

// scriptInstallBinaries installs each checked tarball's executables.
func scriptInstallBinaries(bins []Binary, workDir string) string {
	var sb strings.Builder
	for _, b := range bins {
		fmt.Fprintf(&sb, "fatimage_download_files %s %s %s %s", shQuote(b.what()), shQuote(b.tarball(workDir)), shQuote(b.Destination), shQuote(b.Mode))
		for _, f := range b.Files {
			sb.WriteString(" " + shQuote(f))
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

// stepInstallBinaries installs the checked tarballs' executables.
func stepInstallBinaries(ctx context.Context, s *state) error {
	s.say("installing binaries")
	_, err := s.runScript(ctx, rawScript(contentCommonSh+contentDownloadSh+scriptInstallBinaries(s.plan.binaries, s.workDir)))
	return err
}
