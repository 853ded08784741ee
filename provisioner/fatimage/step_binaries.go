package fatimage

import (
	"context"
	"fmt"
	"path"
	"strings"
)

// tarball is where b's tarball is staged in the work dir.
func (b Binary) tarball(workDir string) string {
	return path.Join(workDir, "bin-"+b.Name+".tar.gz")
}

// stepFetchBinaries puts every tarball into the work dir (downloaded by
// the VM, or by the plugin through its cache and uploaded) and checks
// every sha256 on the VM, all before anything is installed.
func stepFetchBinaries(ctx context.Context, s *state) error {
	c := s.cfg
	s.say(fmt.Sprintf("fetching %d binaries (binary_source = %s)", len(c.binaries), c.BinarySource))
	sc := newScript("binaries")
	for _, b := range c.binaries {
		u, _ := b.downloadURL(c.ReleaseBaseURL)
		dst := b.tarball(s.workDir)
		if c.BinarySource == "host" {
			if err := s.uploadFromCache(ctx, b, u, dst); err != nil {
				return err
			}
			continue
		}
		sc.call("fetch_binary", u, dst)
	}
	verifyBinaries(sc, c.binaries, s.workDir, c.ReleaseBaseURL)
	_, err := s.runScript(ctx, sc)
	return err
}

// verifyBinaries adds the checks of every staged tarball's sha256.
func verifyBinaries(sc *vmScript, bins []Binary, workDir, baseURL string) {
	for _, b := range bins {
		u, _ := b.downloadURL(baseURL)
		sc.call("verify_binary", b.Name, b.Version, strings.ToLower(b.SHA256), b.tarball(workDir), u)
	}
	sc.call("verify_binaries_done")
}

// installBinaries adds the unpacking and installing of each tarball.
func installBinaries(sc *vmScript, bins []Binary, workDir string) {
	for _, b := range bins {
		sc.call("install_binary", append([]string{b.Name, b.Version, b.tarball(workDir), b.Destination, b.Mode}, b.Files...)...)
	}
}

// stepInstallBinaries installs the checked tarballs' executables.
func stepInstallBinaries(ctx context.Context, s *state) error {
	s.say("installing binaries")
	sc := newScript("binaries")
	installBinaries(sc, s.cfg.binaries, s.workDir)
	_, err := s.runScript(ctx, sc)
	return err
}
