package openstack

import (
	"fmt"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
)

// checkZeroDiskFlavor refuses a flavor without a root disk unless the
// build boots from its own volume. Nova gives such a server no local disk:
// it refuses the image-backed boot to non-admins, and where it allows it
// (or the cloud boots from volume by default) createImage makes a
// volume-backed snapshot: a zero-byte image pointing at a Cinder snapshot,
// not the self-contained image this builder promises.
func checkZeroDiskFlavor(c *Config, f *flavors.Flavor) error {
	if f.Disk != 0 || c.UseBlockStorageVolume {
		return nil
	}
	return fmt.Errorf("flavor: %s has a 0 GB root disk, so the server cannot boot from the image on its own disk "+
		"and its snapshot would be a zero-byte image pointing at a Cinder snapshot; set use_blockstorage_volume = true "+
		"(with volume_size) to build on a volume and upload a self-contained image", f.Name)
}
