package openstack

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/imageimport"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/hashicorp/packer-plugin-sdk/multistep"
	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
)

// StepSourceImage resolves the base image: by ID, by name, by filter, or
// by importing external_source_image_url into Glance.
type StepSourceImage struct {
	imported string
}

func (s *StepSourceImage) Run(ctx context.Context, state multistep.StateBag) multistep.StepAction {
	c := state.Get("config").(*Config)
	cl := state.Get("clients").(*clients)
	ui := state.Get("ui").(packersdk.Ui)

	var img *images.Image
	var err error
	switch {
	case c.SourceImage != "":
		img, err = images.Get(ctx, cl.image, c.SourceImage).Extract()
		if isNotFound(err) {
			err = fmt.Errorf("source_image: no image has ID %q (use source_image_name for a name)", c.SourceImage)
		} else if err != nil {
			err = fmt.Errorf("source_image: %q: %w", c.SourceImage, err)
		}
	case c.SourceImageName != "":
		// As the official builder: an exact name, and most_recent applies.
		img, err = findImage(ctx, cl, images.ListOpts{Name: literalName(c.SourceImageName)}, nil, c.SourceImageFilters.MostRecent)
		if err != nil {
			err = fmt.Errorf("source_image_name: %w", err)
		}
	case c.ExternalSourceImageURL != "":
		img, err = s.importImage(ctx, state, c, cl, ui)
	default:
		f := c.SourceImageFilters.Filters
		img, err = findImage(ctx, cl, images.ListOpts{
			Name:       f.Name,
			Owner:      f.Owner,
			Tags:       f.Tags,
			Visibility: images.ImageVisibility(f.Visibility),
		}, f.Properties, c.SourceImageFilters.MostRecent)
		if err != nil {
			err = fmt.Errorf("source_image_filter: %w", err)
		}
	}
	if err != nil {
		return halt(state, err)
	}
	if img.Status != images.ImageStatusActive {
		return halt(state, fmt.Errorf("source image %s (%s) is %s, not active", img.Name, img.ID, img.Status))
	}
	ui.Say(fmt.Sprintf("Using source image %s (%s)", img.Name, img.ID))
	state.Put("source_image_id", img.ID)
	state.Put("source_image_name", img.Name)
	state.Put("source_image_min_disk", img.MinDiskGigabytes)
	state.Put("source_image_size", img.SizeBytes)
	setGenerated(state, "SourceImageID", img.ID)
	setGenerated(state, "SourceImageName", img.Name)
	return multistep.ActionContinue
}

// findImage lists active images matching opts and props. With newest, the
// most recently created match wins; otherwise exactly one must match.
func findImage(ctx context.Context, cl *clients, opts images.ListOpts, props map[string]string, newest bool) (*images.Image, error) {
	// Glance matches names exactly: a pattern is matched here instead.
	pattern := ""
	if strings.ContainsAny(opts.Name, "*?[") {
		pattern, opts.Name = opts.Name, ""
	}
	opts.Status = images.ImageStatusActive
	opts.Sort = "created_at:desc"
	pages, err := images.List(cl.image, opts).AllPages(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing images: %w", err)
	}
	all, err := images.ExtractImages(pages)
	if err != nil {
		return nil, fmt.Errorf("listing images: %w", err)
	}
	var found []images.Image
	for _, img := range all {
		if ok, _ := path.Match(pattern, img.Name); (pattern == "" || ok) && hasProperties(img, props) {
			found = append(found, img)
		}
	}
	// Do not trust the server's sort: a cloud may ignore it.
	sort.SliceStable(found, func(i, j int) bool { return found[i].CreatedAt.After(found[j].CreatedAt) })
	switch {
	case len(found) == 0:
		return nil, fmt.Errorf("no active image matches %s", describeFilter(opts, props, pattern))
	case len(found) > 1 && !newest:
		return nil, fmt.Errorf("%d active images match %s; give source_image (an ID), narrow the filter, or set source_image_filter.most_recent = true", len(found), describeFilter(opts, props, pattern))
	}
	return &found[0], nil
}

// literalName escapes a name for findImage so that `*?[` in it match
// themselves.
func literalName(name string) string {
	if !strings.ContainsAny(name, "*?[") {
		return name
	}
	var b strings.Builder
	for _, r := range name {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func hasProperties(img images.Image, props map[string]string) bool {
	for k, want := range props {
		got, ok := img.Properties[k]
		if !ok || fmt.Sprint(got) != want {
			return false
		}
	}
	return true
}

func describeFilter(o images.ListOpts, props map[string]string, pattern string) string {
	s := ""
	add := func(k, v string) {
		if v != "" {
			if s != "" {
				s += ", "
			}
			s += k + "=" + v
		}
	}
	add("name", o.Name)
	add("name pattern", pattern)
	add("owner", o.Owner)
	add("visibility", string(o.Visibility))
	if len(o.Tags) > 0 {
		add("tags", fmt.Sprint(o.Tags))
	}
	if len(props) > 0 {
		add("properties", fmt.Sprint(props))
	}
	if s == "" {
		return "(no filter)"
	}
	return s
}

// importImage has Glance download the external image, waits for it and
// leaves it for Cleanup to delete.
func (s *StepSourceImage) importImage(ctx context.Context, state multistep.StateBag, c *Config, cl *clients, ui packersdk.Ui) (*images.Image, error) {
	props := map[string]string{BuildIDKey: c.buildID}
	for k, v := range c.ExternalSourceImageProperties {
		props[k] = v
	}
	name := c.buildName + "-source"
	ui.Say(fmt.Sprintf("Importing %s as image %s...", c.ExternalSourceImageURL, name))
	opts := images.CreateOpts{Name: name, DiskFormat: c.ExternalSourceImageFormat, ContainerFormat: "bare", Properties: props}
	id, err := createOrAdopt(ctx, ui, "external_source_image_url: creating image "+name, func(ctx context.Context) (string, error) {
		img, err := images.Create(ctx, cl.image, opts).Extract()
		if err != nil {
			return "", err
		}
		return img.ID, nil
	}, func(ctx context.Context) (string, bool, error) {
		return findBuildImage(ctx, cl, c.buildID, name)
	})
	if err != nil {
		return nil, err
	}
	s.imported = id
	trackerOf(state).Add("image", id, "imported source image "+name)
	_, err = createOrAdopt(ctx, ui, "external_source_image_url: importing into image "+id, func(ctx context.Context) (bool, error) {
		return true, imageimport.Create(ctx, cl.image, id, imageimport.CreateOpts{
			Name: imageimport.WebDownloadMethod,
			URI:  c.ExternalSourceImageURL,
		}).ExtractErr()
	}, func(ctx context.Context) (bool, bool, error) {
		// An import that started has moved the image on from queued.
		img, err := images.Get(ctx, cl.image, id).Extract()
		return true, err == nil && img.Status != images.ImageStatusQueued, err
	})
	if err != nil {
		return nil, err
	}
	if err := waitImage(ctx, cl, id, c.ImageWaitTimeout); err != nil {
		return nil, fmt.Errorf("external_source_image_url: %w", err)
	}
	return images.Get(ctx, cl.image, id).Extract()
}

func (s *StepSourceImage) Cleanup(state multistep.StateBag) {
	if s.imported == "" {
		return
	}
	c := state.Get("config").(*Config)
	cl := state.Get("clients").(*clients)
	ui := state.Get("ui").(packersdk.Ui)
	ctx, cancel := cleanupContext(state, c)
	defer cancel()
	ui.Say(fmt.Sprintf("Deleting the imported source image %s...", s.imported))
	if err := deleteImage(ctx, cl, s.imported, c.StateTimeout); err != nil {
		ui.Error(err.Error())
		return
	}
	trackerOf(state).Done("image", s.imported)
	s.imported = ""
}
