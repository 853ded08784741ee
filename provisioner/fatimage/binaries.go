//go:generate packer-sdc struct-markdown

package fatimage

import (
	"slices"
	"strings"
	"text/template"
)

// Binary is a release tarball whose executables are installed into the
// image after its sha256 is checked. Entries named like a built-in
// binary (node_exporter, prometheus, alertmanager) override only the
// fields they set.
type Binary struct {
	// Project name, e.g. node_exporter.
	Name string `mapstructure:"name" required:"true"`
	// Version without the leading v, e.g. 1.11.1.
	Version string `mapstructure:"version"`
	// sha256 (hex) of the tarball. Required unless the name and version
	// are a built-in's.
	SHA256 string `mapstructure:"sha256"`
	// Download URL, a Go template over .BaseURL (`release_base_url`),
	// .Name and .Version. Default
	// `{{.BaseURL}}/{{.Name}}/releases/download/v{{.Version}}/{{.Name}}-{{.Version}}.linux-amd64.tar.gz`.
	URL string `mapstructure:"url"`
	// Executables to install, found one directory down in the tarball.
	// Default [name].
	Files []string `mapstructure:"files"`
	// Directory the files are installed to. Default /usr/local/bin.
	Destination string `mapstructure:"destination"`
	// Octal mode of the installed files. Default 0755.
	Mode string `mapstructure:"mode"`
}

const (
	defaultReleaseBaseURL = "https://github.com/prometheus"
	defaultBinaryURL      = "{{.BaseURL}}/{{.Name}}/releases/download/v{{.Version}}/{{.Name}}-{{.Version}}.linux-amd64.tar.gz"
)

// mergeBinaries returns the built-ins (in order) with the configured
// entries laid over them by name, then the configured entries that are
// not built-ins. Empty fields of an override come from the built-in
// (the build's own when its group is built, as the site's appliance may
// pin another version; else the table's).
func mergeBinaries(builtin []Binary, conf []Binary) []Binary {
	over := map[string]Binary{}
	for _, b := range conf {
		over[b.Name] = b
	}
	fill := func(b Binary) Binary {
		base := builtinBinary(b.Name)
		if i := slices.IndexFunc(builtin, func(x Binary) bool { return x.Name == b.Name }); i >= 0 {
			base = builtin[i]
		}
		if base.Version == "" {
			return b // not a built-in
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
