package sbom

import (
	"bytes"
	"fmt"
	"strings"

	cdx "github.com/CycloneDX/cyclonedx-go"
	purl "github.com/package-url/packageurl-go"
)

// ParseCycloneDX reads back an SBOM this package wrote.
func ParseCycloneDX(data []byte) (*Image, error) {
	var bom cdx.BOM
	if err := cdx.NewBOMDecoder(bytes.NewReader(data), cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
		return nil, fmt.Errorf("sbom: %w", err)
	}
	img := &Image{Snapshots: map[string]string{}}
	if m := bom.Metadata; m != nil {
		readMetadata(img, m)
	}
	if bom.Components == nil {
		return img, nil
	}
	for _, c := range *bom.Components {
		if err := readComponent(img, c); err != nil {
			return nil, err
		}
	}
	return img, nil
}

func props(c cdx.Component) map[string][]string {
	m := map[string][]string{}
	if c.Properties != nil {
		for _, p := range *c.Properties {
			m[p.Name] = append(m[p.Name], p.Value)
		}
	}
	return m
}

func first(m map[string][]string, k string) string {
	if v := m[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func firstHash(c cdx.Component) string {
	if c.Hashes != nil && len(*c.Hashes) > 0 {
		return (*c.Hashes)[0].Value
	}
	return ""
}

func readMetadata(img *Image, m *cdx.Metadata) {
	if c := m.Component; c != nil {
		img.Name, img.OSVersion, img.OS = c.Name, c.Version, c.Description
		if c.Pedigree != nil && c.Pedigree.Ancestors != nil && len(*c.Pedigree.Ancestors) > 0 {
			a := (*c.Pedigree.Ancestors)[0]
			img.SourceImage = Source{Name: a.Name, ID: first(props(a), propSrcID)}
		}
	}
	if m.Properties == nil {
		return
	}
	for _, p := range *m.Properties {
		switch {
		case p.Name == propOSID:
			img.OSID = p.Value
		case p.Name == propKernel:
			img.Kernel = p.Value
		case p.Name == propPartial:
			img.Partial = append(img.Partial, p.Value)
		case strings.HasPrefix(p.Name, propSnapshot):
			img.Snapshots[strings.TrimPrefix(p.Name, propSnapshot)] = p.Value
		case p.Name == propUser:
			f := strings.Split(p.Value+"\t\t\t\t", "\t")
			img.Users = append(img.Users, User{Name: f[0], UID: f[1], GID: f[2], Home: f[3], Shell: f[4]})
		}
	}
}

func readComponent(img *Image, c cdx.Component) error {
	p := props(c)
	switch first(p, propKind) {
	case "rpm":
		u, err := purl.FromString(c.PackageURL)
		if err != nil {
			return fmt.Errorf("sbom: component %s: %w", c.Name, err)
		}
		q := u.Qualifiers.Map()
		v, r := u.Version, ""
		if i := strings.LastIndexByte(u.Version, '-'); i >= 0 { // rpm allows no '-' in a version or release
			v, r = u.Version[:i], u.Version[i+1:]
		}
		rpm := RPM{Name: u.Name, EVR: EVR{first(p, propEpoch), v, r}, Arch: q["arch"], Summary: c.Description,
			Repo: first(p, propRepo), URL: q["download_url"], SHA256: firstHash(c)}
		if c.Licenses != nil && len(*c.Licenses) > 0 && (*c.Licenses)[0].License != nil {
			rpm.License = (*c.Licenses)[0].License.Name
		}
		img.RPMs = append(img.RPMs, rpm)
	case "container":
		img.Containers = append(img.Containers, Container{Image: c.Name, User: first(p, propCUser), Digest: c.Version})
	case "python":
		if img.Python == nil {
			img.Python = map[string][]PyDist{}
		}
		env := first(p, propVenv)
		img.Python[env] = append(img.Python[env], PyDist{Name: c.Name, Version: c.Version})
	case "git":
		if img.Git == nil {
			img.Git = map[string]Git{}
		}
		var repo string
		if c.ExternalReferences != nil && len(*c.ExternalReferences) > 0 {
			repo = (*c.ExternalReferences)[0].URL
		}
		img.Git[c.Name] = Git{Repo: repo, Ref: first(p, propRef), Commit: c.Version}
	case "download":
		if img.Downloads == nil {
			img.Downloads = map[string]File{}
		}
		u, _ := purl.FromString(c.PackageURL)
		img.Downloads[c.Name] = File{URL: u.Qualifiers.Map()["download_url"], SHA256: firstHash(c)}
	case "binary":
		if img.Binaries == nil {
			img.Binaries = map[string]Binary{}
		}
		img.Binaries[c.Name] = Binary{Version: c.Version, SHA256: firstHash(c), Files: p[propFile]}
	}
	return nil
}
