package releases

import (
	_ "embed"
	"strings"
)

// What the k3s group fetches from GitHub releases besides its SELinux
// RPM (repos.URLRPMs): the k3s executable and its airgap images at the
// appliance's k3s_version, and helm's tarball (helm's own host, so a
// build points its download here with a template item).

// K3sVersion is the appliance's k3s_version.
const K3sVersion = "v1.31.0+k3s1"

// K3sPath and K3sImagesPath are the release assets' paths.
const (
	K3sPath       = "/k3s-io/k3s/releases/download/" + K3sVersion + "/k3s"
	K3sImagesPath = "/k3s-io/k3s/releases/download/" + K3sVersion + "/k3s-airgap-images-amd64.tar.zst"
)

// HelmPath is the helm v3.11.0 tarball's path, as under https://get.helm.sh.
const HelmPath = "/helm-v3.11.0-linux-amd64.tar.gz"

// k3sStandIn is the stand-in k3s (Python, as the VMs have it): it runs
// under systemd as Type=notify and answers kubectl and `token create`.
//
//go:embed standins/k3s.py
var k3sStandIn string

// zstdMagic starts a zstd frame; the images file is never unpacked at
// build time, only placed.
const zstdMagic = "\x28\xb5\x2f\xfd"

// addK3sFiles serves k3s, its airgap images and helm.
func (s *Server) addK3sFiles() error {
	s.files[K3sPath] = []byte(strings.ReplaceAll(k3sStandIn, "@VERSION@", K3sVersion))
	s.files[K3sImagesPath] = []byte(zstdMagic + "lab stand-in of k3s " + K3sVersion + "'s airgap images\n")
	helm, err := tarGz("linux-amd64", []tarEntry{
		{"helm", "#!/bin/sh\necho 'version.BuildInfo{Version:\"v3.11.0\"} (lab stand-in)'\n", 0o755},
		{"LICENSE", license, 0o644},
		{"README.md", "# helm v3.11.0 (lab stand-in)\n", 0o644},
	})
	if err != nil {
		return err
	}
	s.files[HelmPath] = helm
	return nil
}
