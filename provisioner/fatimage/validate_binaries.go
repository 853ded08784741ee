package fatimage

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/safepath"
)

// checkBinaries checks the configured entries for duplicates, then
// the merged list, naming configured entries by their index.
func checkBinaries(conf, bins []Binary, baseURL string) []error {
	var errs problems
	add := errs.add
	idx := map[string]int{}
	for i, b := range conf {
		if _, dup := idx[b.Name]; dup {
			add("binaries[%d]: duplicate binary %q", i, b.Name)
		}
		idx[b.Name] = i
	}
	for _, b := range bins {
		i, ok := idx[b.Name]
		if !ok {
			i = -1 // a built-in: named by "(name)" alone
		}
		if b.Name == "" {
			add("binaries[%d]: name is required", i)
			continue
		}
		if !reName.MatchString(b.Name) {
			add("binaries[%d]: name %q is not valid", i, b.Name)
		}
		if b.Version == "" || strings.HasPrefix(b.Version, "v") || strings.ContainsAny(b.Version, "/ ") {
			add("binaries[%d] (%s): version %q must be like 1.2.3 (no leading v)", i, b.Name, b.Version)
		}
		if b.SHA256 == "" {
			add("binaries[%d] (%s): sha256 is required (version %s is not a built-in one)", i, b.Name, b.Version)
		} else if h, err := hex.DecodeString(b.SHA256); err != nil || len(h) != sha256.Size {
			add("binaries[%d] (%s): sha256 must be 64 hex digits", i, b.Name)
		}
		for _, f := range b.Files {
			if !reName.MatchString(f) {
				add("binaries[%d] (%s): file %q is not a plain executable name", i, b.Name, f)
			}
		}
		if msg := safepath.Dest(b.Destination, true); msg != "" {
			add("binaries[%d] (%s): destination %q %s", i, b.Name, b.Destination, msg)
		}
		msg := safepath.Mode(b.Mode)
		if b.Mode == "" {
			msg = `"" must be octal like 0755`
		}
		if msg != "" {
			add("binaries[%d] (%s): mode %s", i, b.Name, msg)
		}
		u, err := b.downloadURL(baseURL)
		if err != nil {
			add("binaries[%d] (%s): url: %v", i, b.Name, err)
		} else if msg := checkURL("url", u); msg != "" {
			add("binaries[%d] (%s): %s", i, b.Name, msg)
		}
	}
	return errs
}

// validateBinaries checks the release options and the merged binaries.
func validateBinaries(c *Config, p *plan) []error {
	var errs problems
	if msg := checkURL("release_base_url", c.ReleaseBaseURL); msg != "" {
		errs.add("%s", msg)
	} else {
		errs = append(errs, checkBinaries(c.Binaries, p.binaries, c.ReleaseBaseURL)...)
	}
	switch c.BinarySource {
	case "vm", "host":
	default:
		errs.add("binary_source: %q is not one of vm, host", c.BinarySource)
	}
	return errs
}
