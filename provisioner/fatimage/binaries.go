//go:generate packer-sdc struct-markdown

package fatimage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"path"
	"strings"
	"text/template"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
)

// Binary is a release tarball whose executables are installed into the
// image after its sha256 is checked. Entries named like a built-in
// binary (node_exporter, prometheus, alertmanager) override only the
// fields they set.
type Binary struct {
	// Project name, e.g. node_exporter.
	Name string `mapstructure:"name" required:"true" yaml:"-"`
	// Version without the leading v, e.g. 1.11.1.
	Version string `mapstructure:"version" yaml:"version"`
	// sha256 (hex) of the tarball. Required unless the name and version
	// are a built-in's.
	SHA256 string `mapstructure:"sha256" yaml:"sha256"`
	// Download URL, a Go template over .BaseURL (`release_base_url`),
	// .Name and .Version. Default
	// `{{.BaseURL}}/{{.Name}}/releases/download/v{{.Version}}/{{.Name}}-{{.Version}}.linux-amd64.tar.gz`.
	URL string `mapstructure:"url" yaml:"url"`
	// Executables to install, found one directory down in the tarball.
	// Default [name].
	Files []string `mapstructure:"files" yaml:"files"`
	// Directory the files are installed to. Default /usr/local/bin.
	Destination string `mapstructure:"destination" yaml:"destination"`
	// Octal mode of the installed files. Default 0755.
	Mode string `mapstructure:"mode" yaml:"mode"`
}

const (
	defaultReleaseBaseURL = "https://github.com/prometheus"
	defaultBinaryURL      = "{{.BaseURL}}/{{.Name}}/releases/download/v{{.Version}}/{{.Name}}-{{.Version}}.linux-amd64.tar.gz"
)

// mergeBinaries returns the built-ins (in order) with the configured
// entries laid over them by name, then the configured entries that are
// not built-ins. Empty fields of an override come from the built-in
// table even when its group was not asked for.
func mergeBinaries(builtin []Binary, conf []Binary, table map[string]Binary) []Binary {
	over := map[string]Binary{}
	for _, b := range conf {
		over[b.Name] = b
	}
	fill := func(b Binary) Binary {
		base, ok := table[b.Name]
		if !ok {
			return b
		}
		if b.Version == "" {
			b.Version = base.Version
		}
		if b.SHA256 == "" && b.Version == base.Version {
			b.SHA256 = base.SHA256
		}
		if len(b.Files) == 0 {
			b.Files = base.Files
		}
		return b
	}
	var out []Binary
	done := map[string]bool{}
	for _, b := range builtin {
		if o, ok := over[b.Name]; ok {
			b = o
		}
		out = append(out, fill(b))
		done[b.Name] = true
	}
	for _, b := range conf {
		if !done[b.Name] {
			out = append(out, fill(b))
			done[b.Name] = true
		}
	}
	for i := range out {
		if out[i].URL == "" {
			out[i].URL = defaultBinaryURL
		}
		if len(out[i].Files) == 0 {
			out[i].Files = []string{out[i].Name}
		}
		if out[i].Destination == "" {
			out[i].Destination = "/usr/local/bin"
		}
		if out[i].Mode == "" {
			out[i].Mode = "0755"
		}
	}
	return out
}

// downloadURL renders b's URL template.
func (b Binary) downloadURL(baseURL string) (string, error) {
	t, err := template.New("url").Option("missingkey=error").Parse(b.URL)
	if err != nil {
		return "", err
	}
	var s strings.Builder
	err = t.Execute(&s, map[string]string{"BaseURL": strings.TrimRight(baseURL, "/"), "Name": b.Name, "Version": b.Version})
	return s.String(), err
}

// validateBinaries checks the configured entries for duplicates, then
// the merged list, naming configured entries by their index.
func validateBinaries(conf, bins []Binary, baseURL string) []error {
	var errs []error
	add := func(f string, a ...any) { errs = append(errs, fmt.Errorf(f, a...)) }
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
		if !path.IsAbs(b.Destination) || path.Clean(b.Destination) != b.Destination {
			add("binaries[%d] (%s): destination %q must be an absolute, clean directory", i, b.Name, b.Destination)
		}
		if !reMode.MatchString(b.Mode) {
			add("binaries[%d] (%s): mode %q must be octal like 0755", i, b.Name, b.Mode)
		}
		u, err := b.downloadURL(baseURL)
		if err != nil {
			add("binaries[%d] (%s): url: %v", i, b.Name, err)
		} else if pu, err := url.Parse(u); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			add("binaries[%d] (%s): url %q must be an http(s) URL", i, b.Name, u)
		}
	}
	return errs
}

// tarball is where b's tarball is staged in the work dir.
func (b Binary) tarball(workDir string) string {
	return path.Join(workDir, "bin-"+b.Name+".tar.gz")
}

// stepFetchBinaries puts every tarball into the work dir (downloaded by
// the VM, or by the plugin through its cache and uploaded) and checks
// every sha256 on the VM, all before anything is installed.
func (p *Provisioner) stepFetchBinaries(ctx context.Context) error {
	c := &p.config
	var s strings.Builder
	for _, b := range c.binaries {
		u, _ := b.downloadURL(c.ReleaseBaseURL)
		dst := b.tarball(p.workDir)
		if c.BinarySource == "host" {
			if err := p.uploadFromCache(ctx, b, u, dst); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(&s, "echo %s\nfatimage_run curl -fsSL --retry 3 --retry-connrefused --connect-timeout 20 -o %s %s\n",
			shQuote("downloading "+u), shQuote(dst), shQuote(u))
	}
	s.WriteString(scriptVerifyBinaries(c.binaries, p.workDir))
	_, err := p.runScript(ctx, "binaries-fetch", s.String())
	return err
}

// scriptVerifyBinaries checks every staged tarball's sha256.
func scriptVerifyBinaries(bins []Binary, workDir string) string {
	var b strings.Builder
	b.WriteString("bad=0\n")
	for _, bin := range bins {
		fmt.Fprintf(&b, "printf '%%s  %%s\\n' %s %s | sha256sum -c --quiet - || { echo %s >&2; bad=1; }\n",
			shQuote(strings.ToLower(bin.SHA256)), shQuote(bin.tarball(workDir)),
			shQuote(fmt.Sprintf("binaries: %s %s: sha256 mismatch (want %s)", bin.Name, bin.Version, bin.SHA256)))
	}
	b.WriteString("[ \"$bad\" = 0 ] || { echo 'binaries: checksum mismatch; nothing installed' >&2; exit 1; }\necho 'binaries: all checksums match'\n")
	return b.String()
}

// scriptInstallBinaries unpacks each tarball and installs its files,
// leaving identical files alone.
func scriptInstallBinaries(bins []Binary, workDir string) string {
	var b strings.Builder
	for _, bin := range bins {
		x := shQuote(path.Join(workDir, "x-"+bin.Name))
		fmt.Fprintf(&b, "rm -rf %s && mkdir -p %s && tar -xzf %s -C %s --no-same-owner\n", x, x, shQuote(bin.tarball(workDir)), x)
		for _, f := range bin.Files {
			dst := shQuote(path.Join(bin.Destination, f))
			label := fmt.Sprintf("%s (%s %s)", path.Join(bin.Destination, f), bin.Name, bin.Version)
			fmt.Fprintf(&b, "src=$(find %s -mindepth 2 -maxdepth 2 -type f -name %s | head -n1)\n", x, shQuote(f))
			fmt.Fprintf(&b, "[ -n \"$src\" ] || { echo %s >&2; exit 1; }\n", shQuote("binaries: "+f+" not found in the "+bin.Name+" tarball"))
			fmt.Fprintf(&b, "if cmp -s \"$src\" %s && [ \"$(stat -c %%a %s)\" = %s ]; then echo %s; else install -D -o root -g root -m %s \"$src\" %s; echo %s; fi\n",
				dst, dst, shQuote(strings.TrimPrefix(bin.Mode, "0")), shQuote("unchanged "+label), shQuote(bin.Mode), dst, shQuote("installed "+label))
		}
		fmt.Fprintf(&b, "rm -rf %s %s\n", x, shQuote(bin.tarball(workDir)))
	}
	return b.String()
}

// binaryCacheDir is the plugin's content-addressed download cache.
func binaryCacheDir() (string, error) {
	return packersdk.CachePath("fatimage", "sha256")
}

// uploadFromCache is uploadCached for a binary's tarball.
func (p *Provisioner) uploadFromCache(ctx context.Context, b Binary, u, dst string) error {
	return p.uploadCached(ctx, "binaries: "+b.Name+" "+b.Version, b.SHA256, u, dst)
}
