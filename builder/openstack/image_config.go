//go:generate packer-sdc struct-markdown

package openstack

import (
	"errors"
	"fmt"
	"strings"
)

// DefaultSkipInheritedProperties are removed from the output image unless
// skip_inherited_properties is set: a snapshot inherits its base image's
// properties, and a copied signature marker claims a signature the new
// image does not have.
var DefaultSkipInheritedProperties = []string{"signature_verified"}

// ImageConfig configures the output image.
type ImageConfig struct {
	// The name of the output image. Required.
	ImageName string `mapstructure:"image_name" required:"true"`
	// Glance properties set on the output image (as by the official
	// builder). `image_type = "image"` is added unless set here or in
	// `image_properties`. With `use_blockstorage_volume` they are set on
	// the boot volume (`os-set_image_metadata`) before it is uploaded, so
	// Cinder copies them into the image.
	ImageMetadata map[string]string `mapstructure:"metadata"`
	// More Glance properties set on the output image after it is active;
	// they win over `metadata` and inherited properties.
	ImageProperties map[string]string `mapstructure:"image_properties"`
	// Property names removed from the output image after it is active.
	// Defaults to `["signature_verified"]`; set `[]` to keep everything
	// the base image passed on.
	SkipInheritedProperties []string `mapstructure:"skip_inherited_properties"`
	// `public`, `private`, `shared` or `community`, in any case. Defaults
	// to the cloud's default (normally `private`).
	ImageVisibility string `mapstructure:"image_visibility"`
	// Project IDs the image is shared with. Glance gives members only to
	// shared images: another `image_visibility` validates (as with the
	// official builder) with a warning, and the build fails at Glance.
	ImageMembers []string `mapstructure:"image_members"`
	// Accept the membership on behalf of each member project. Glance lets
	// only the member project (or an admin) accept: the build tries its
	// own token, then one re-scoped to the member project, which works
	// when the credentials have a role there; otherwise the build fails
	// saying so. Ignored (with a warning) without `image_members`.
	ImageAutoAcceptMembers bool `mapstructure:"image_auto_accept_members"`
	// The disk format of an image uploaded from a volume, for example
	// `raw` or `qcow2`. Ignored, with a warning, without
	// `use_blockstorage_volume`.
	ImageDiskFormat string `mapstructure:"image_disk_format"`
	// Tags set on the output image.
	ImageTags []string `mapstructure:"image_tags"`
	// The image's `min_disk` in GiB. 0 leaves Glance's value.
	ImageMinDisk int `mapstructure:"image_min_disk"`
	// Protect the image from deletion.
	ImageProtected bool `mapstructure:"image_protected"`
	// Build and provision but create no image.
	SkipCreateImage bool `mapstructure:"skip_create_image"`

	warns []string
}

var validDiskFormats = []string{"ami", "ari", "aki", "vhd", "vhdx", "vmdk", "raw", "qcow2", "vdi", "ploop", "iso"}

func (c *ImageConfig) Prepare(useVolume bool) []error {
	var errs []error
	if c.ImageName == "" && !c.SkipCreateImage {
		errs = append(errs, errors.New("image_name: required"))
	}
	if v := strings.ToLower(c.ImageVisibility); oneOf(v, "public", "private", "shared", "community") {
		c.ImageVisibility = v
	} else if v != "" {
		errs = append(errs, fmt.Errorf("image_visibility: %q is not one of public, private, shared, community", c.ImageVisibility))
	}
	c.warns = append(c.warns, c.membersWarnings()...)
	if c.ImageDiskFormat != "" {
		if !useVolume {
			// The appliance's template always sets it; the official
			// builder refuses it here, which makes that template fail.
			c.warns = append(c.warns, fmt.Sprintf("image_disk_format: %q ignored because use_blockstorage_volume is false (a snapshot keeps the server disk's format)", c.ImageDiskFormat))
			c.ImageDiskFormat = ""
		} else if !oneOf(c.ImageDiskFormat, validDiskFormats...) {
			errs = append(errs, fmt.Errorf("image_disk_format: %q is not one of %s", c.ImageDiskFormat, strings.Join(validDiskFormats, ", ")))
		}
	}
	if c.ImageMinDisk < 0 {
		errs = append(errs, fmt.Errorf("image_min_disk: must be >= 0, got %d", c.ImageMinDisk))
	}
	if c.SkipInheritedProperties == nil {
		c.SkipInheritedProperties = append([]string(nil), DefaultSkipInheritedProperties...)
	}
	for k := range c.ImageProperties {
		for _, s := range c.SkipInheritedProperties {
			if k == s {
				errs = append(errs, fmt.Errorf("image_properties: %q is also in skip_inherited_properties", k))
			}
		}
		if oneOf(k, reservedImageAttrs...) {
			errs = append(errs, fmt.Errorf("image_properties: %q is an image attribute, not a property; use its own option", k))
		}
	}
	if _, set := c.ImageProperties["image_type"]; !set && c.ImageMetadata["image_type"] == "" {
		// The official builder's default: Nova's snapshot marker, also on
		// volume uploads.
		if c.ImageMetadata == nil {
			c.ImageMetadata = map[string]string{}
		}
		c.ImageMetadata["image_type"] = "image"
	}
	errs = append(errs, checkMetadata("metadata", c.ImageMetadata)...)
	errs = append(errs, checkMetadata("image_properties", c.ImageProperties)...)
	return errs
}

// membersWarnings flag member settings the official builder accepts and
// that are probably wrong; they are kept as given (Glance decides).
func (c *ImageConfig) membersWarnings() []string {
	var w []string
	if len(c.ImageMembers) > 0 && c.ImageVisibility != "" && c.ImageVisibility != "shared" {
		w = append(w, fmt.Sprintf("image_members: Glance gives members only to shared images, and image_visibility is %q: the build will fail when it adds them", c.ImageVisibility))
	}
	if c.ImageAutoAcceptMembers && len(c.ImageMembers) == 0 {
		w = append(w, "image_auto_accept_members: ignored without image_members")
		c.ImageAutoAcceptMembers = false
	}
	return w
}

// reservedImageAttrs are Glance's own attributes; a JSON patch on them as
// properties is refused by Glance.
var reservedImageAttrs = []string{"id", "name", "status", "visibility", "protected", "tags", "min_disk", "min_ram",
	"disk_format", "container_format", "owner", "size", "virtual_size", "checksum", "created_at", "updated_at",
	"file", "schema", "self", "locations", "direct_url", "os_hidden"}
