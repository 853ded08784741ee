package sbom

import (
	"bytes"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/google/uuid"
	purl "github.com/package-url/packageurl-go"
)

// Property names this package writes and reads back.
const (
	propKind     = "fatimage:kind" // rpm, container, python, git, download, binary
	propRepo     = "fatimage:repository"
	propVenv     = "fatimage:venv"
	propUser     = "fatimage:user" // name uid gid home shell, tab-separated
	propSnapshot = "fatimage:snapshot:"
	propKernel   = "fatimage:kernel"
	propOSID     = "fatimage:os_id"
	propSrcID    = "fatimage:source_image_id"
	propRef      = "fatimage:ref"
	propFile     = "fatimage:file"
	propPartial  = "fatimage:partial"
	propEpoch    = "fatimage:epoch"
	propCUser    = "fatimage:container_user"
)

// Tool names the generator in the SBOM's metadata.
type Tool struct{ Name, Version string }

// CycloneDX is img as a CycloneDX 1.6 JSON document.
func CycloneDX(img *Image, tool Tool, now time.Time) ([]byte, error) {
	bom := cdx.NewBOM()
	bom.SerialNumber = "urn:uuid:" + uuid.NewString()
	bom.Metadata = &cdx.Metadata{
		Timestamp: now.UTC().Format(time.RFC3339),
		Tools: &cdx.ToolsChoice{Components: &[]cdx.Component{{
			Type: cdx.ComponentTypeApplication, Name: tool.Name, Version: tool.Version,
		}}},
		Component:  imageComponent(img),
		Properties: imageProperties(img),
	}
	var comps []cdx.Component
	for _, r := range img.RPMs {
		comps = append(comps, rpmComponent(img.OSID, r))
	}
	comps = append(comps, contentComponents(img)...)
	bom.Components = &comps
	var buf bytes.Buffer
	enc := cdx.NewBOMEncoder(&buf, cdx.BOMFileFormatJSON).SetPretty(true)
	if err := enc.EncodeVersion(bom, cdx.SpecVersion1_6); err != nil {
		return nil, fmt.Errorf("sbom: %w", err)
	}
	return buf.Bytes(), nil
}

func prop(name, value string) cdx.Property { return cdx.Property{Name: name, Value: value} }

func sha256Hash(hex string) *[]cdx.Hash {
	if hex == "" {
		return nil
	}
	return &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: strings.ToLower(strings.TrimPrefix(hex, "sha256:"))}}
}

// imageComponent is the image itself, descended from the source image.
func imageComponent(img *Image) *cdx.Component {
	name := img.Name
	if name == "" {
		name = "image"
	}
	c := &cdx.Component{BOMRef: "image", Type: cdx.ComponentTypeOS, Name: name, Version: img.OSVersion, Description: img.OS}
	if img.SourceImage != (Source{}) {
		c.Pedigree = &cdx.Pedigree{Ancestors: &[]cdx.Component{{
			BOMRef: "source-image", Type: cdx.ComponentTypeOS, Name: img.SourceImage.Name,
			Properties: &[]cdx.Property{prop(propSrcID, img.SourceImage.ID)},
		}}}
	}
	return c
}

func imageProperties(img *Image) *[]cdx.Property {
	p := []cdx.Property{prop(propOSID, img.OSID), prop(propKernel, img.Kernel)}
	for _, k := range slices.Sorted(maps.Keys(img.Snapshots)) {
		p = append(p, prop(propSnapshot+k, img.Snapshots[k]))
	}
	for _, u := range img.Users {
		p = append(p, prop(propUser, strings.Join([]string{u.Name, u.UID, u.GID, u.Home, u.Shell}, "\t")))
	}
	for _, x := range img.Partial {
		p = append(p, prop(propPartial, x))
	}
	return &p
}

// rpmPURL is pkg:rpm/<os id>/<name>@<version>-<release>?arch=..&epoch=..&repository_id=..
func rpmPURL(osID string, r RPM) string {
	q := purl.Qualifiers{{Key: "arch", Value: r.Arch}}
	if r.Epoch != "" && r.Epoch != "0" {
		q = append(q, purl.Qualifier{Key: "epoch", Value: r.Epoch})
	}
	if r.Repo != "" && !strings.HasPrefix(r.Repo, "@") {
		q = append(q, purl.Qualifier{Key: "repository_id", Value: r.Repo})
	}
	if r.URL != "" {
		q = append(q, purl.Qualifier{Key: "download_url", Value: r.URL})
	}
	return purl.NewPackageURL(purl.TypeRPM, osID, r.Name, r.Version+"-"+r.Release, q, "").ToString()
}

func rpmComponent(osID string, r RPM) cdx.Component {
	p := rpmPURL(osID, r)
	props := []cdx.Property{prop(propKind, "rpm")}
	if r.Repo != "" {
		props = append(props, prop(propRepo, r.Repo))
	}
	if r.Epoch != "" {
		props = append(props, prop(propEpoch, r.Epoch))
	}
	c := cdx.Component{BOMRef: p, Type: cdx.ComponentTypeLibrary, Name: r.Name, Version: r.EVR.String(),
		Description: r.Summary, PackageURL: p, Hashes: sha256Hash(r.SHA256), Properties: &props}
	if r.License != "" {
		c.Licenses = &cdx.Licenses{{License: &cdx.License{Name: r.License}}}
	}
	return c
}

// contentComponents are the containers, venvs, checkouts, downloads and
// binaries.
func contentComponents(img *Image) []cdx.Component {
	var out []cdx.Component
	for _, c := range img.Containers {
		out = append(out, containerComponent(c))
	}
	for _, env := range slices.Sorted(maps.Keys(img.Python)) {
		for _, d := range img.Python[env] {
			p := purl.NewPackageURL(purl.TypePyPi, "", strings.ToLower(d.Name), d.Version, nil, "").ToString()
			out = append(out, cdx.Component{BOMRef: "python:" + env + ":" + p, Type: cdx.ComponentTypeLibrary,
				Name: d.Name, Version: d.Version, PackageURL: p,
				Properties: &[]cdx.Property{prop(propKind, "python"), prop(propVenv, env)}})
		}
	}
	for _, dest := range slices.Sorted(maps.Keys(img.Git)) {
		out = append(out, gitComponent(dest, img.Git[dest]))
	}
	for _, dest := range slices.Sorted(maps.Keys(img.Downloads)) {
		f := img.Downloads[dest]
		q := purl.Qualifiers{{Key: "download_url", Value: f.URL}, {Key: "checksum", Value: "sha256:" + f.SHA256}}
		out = append(out, cdx.Component{BOMRef: "download:" + dest, Type: cdx.ComponentTypeFile, Name: dest,
			PackageURL: purl.NewPackageURL(purl.TypeGeneric, "", path.Base(f.URL), "", q, "").ToString(),
			Hashes:     sha256Hash(f.SHA256), Properties: &[]cdx.Property{prop(propKind, "download")}})
	}
	for _, name := range slices.Sorted(maps.Keys(img.Binaries)) {
		b := img.Binaries[name]
		props := []cdx.Property{prop(propKind, "binary")}
		for _, f := range b.Files {
			props = append(props, prop(propFile, f))
		}
		out = append(out, cdx.Component{BOMRef: "binary:" + name, Type: cdx.ComponentTypeApplication, Name: name,
			Version: b.Version, Hashes: sha256Hash(b.SHA256), Properties: &props})
	}
	return out
}

func containerComponent(c Container) cdx.Component {
	ref := c.Image
	if i := strings.IndexAny(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	repo := ref
	if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
		repo = ref[:i]
	}
	q := purl.Qualifiers{{Key: "repository_url", Value: repo}}
	p := purl.NewPackageURL(purl.TypeOCI, "", path.Base(repo), c.Digest, q, "").ToString()
	return cdx.Component{BOMRef: "container:" + c.User + ":" + c.Image, Type: cdx.ComponentTypeContainer,
		Name: c.Image, Version: c.Digest, PackageURL: p, Hashes: sha256Hash(c.Digest),
		Properties: &[]cdx.Property{prop(propKind, "container"), prop(propCUser, c.User)}}
}

func gitComponent(dest string, g Git) cdx.Component {
	q := purl.Qualifiers{{Key: "vcs_url", Value: "git+" + g.Repo + "@" + g.Commit}}
	return cdx.Component{BOMRef: "git:" + dest, Type: cdx.ComponentTypeApplication, Name: dest, Version: g.Commit,
		PackageURL:         purl.NewPackageURL(purl.TypeGeneric, "", path.Base(strings.TrimSuffix(g.Repo, ".git")), g.Commit, q, "").ToString(),
		ExternalReferences: &[]cdx.ExternalReference{{Type: cdx.ERTypeVCS, URL: g.Repo}},
		Properties:         &[]cdx.Property{prop(propKind, "git"), prop(propRef, g.Ref)}}
}
