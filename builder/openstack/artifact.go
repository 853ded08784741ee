package openstack

import (
	"context"
	"fmt"
	"log"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	registryimage "github.com/hashicorp/packer-plugin-sdk/packer/registry/image"
)

// Artifact is an image in Glance.
type Artifact struct {
	ImageID         string
	ImageName       string
	Region          string
	SourceImageID   string
	SourceImageName string
	BuilderIDValue  string
	// StateData carries generated data for post-processors.
	StateData map[string]any

	imageClient *gophercloud.ServiceClient
}

func (a *Artifact) BuilderId() string { return a.BuilderIDValue } //nolint:revive // packersdk.Artifact names it

func (*Artifact) Files() []string { return nil }

func (a *Artifact) Id() string { return a.ImageID } //nolint:revive // packersdk.Artifact names it

// String is the official builder's text, word for word: scripts take the
// image ID from the end of "An image was created: ID".
func (a *Artifact) String() string {
	return fmt.Sprintf("An image was created: %s", a.ImageID)
}

func (a *Artifact) State(name string) any {
	if name == registryimage.ArtifactStateURI {
		img, err := registryimage.FromArtifact(a,
			registryimage.WithProvider("openstack"),
			registryimage.WithRegion(a.Region),
			registryimage.WithSourceID(a.SourceImageID),
		)
		if err != nil {
			log.Printf("[DEBUG] error building HCP Packer registry metadata: %s", err)
			return nil
		}
		return img
	}
	return a.StateData[name]
}

// Destroy deletes the image.
func (a *Artifact) Destroy() error {
	if a.imageClient == nil {
		return fmt.Errorf("image %s: no client to delete it with", a.ImageID)
	}
	err := images.Delete(context.Background(), a.imageClient, a.ImageID).ExtractErr()
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("deleting image %s: %w", a.ImageID, err)
	}
	return nil
}
