//go:generate packer-sdc struct-markdown
//go:generate packer-sdc mapstructure-to-hcl2 -type ImageFilter,ImageFilterOptions

package openstack

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path"
	"strings"
	"time"

	"github.com/hashicorp/packer-plugin-sdk/communicator"
	"github.com/hashicorp/packer-plugin-sdk/template/interpolate"
)

// DefaultStateTimeout bounds each wait for a server, volume or floating IP.
const DefaultStateTimeout = 10 * time.Minute

// RunConfig configures the build server.
type RunConfig struct {
	Comm communicator.Config `mapstructure:",squash"`

	// Which address to connect to: `public` or `private` picks the
	// addresses of that name in the server's networks; empty means the
	// floating IP if any, else the first fixed address.
	SSHInterface string `mapstructure:"ssh_interface"`
	// The IP version to connect over: `4` or `6`. Empty takes either.
	SSHIPVersion string `mapstructure:"ssh_ip_version"`

	// The ID of the base image. Exactly one of `source_image`,
	// `source_image_name`, `external_source_image_url` and
	// `source_image_filter` is required.
	SourceImage string `mapstructure:"source_image"`
	// The name of the base image, matched exactly; it must match exactly
	// one image, or the newest is taken with `source_image_filter {
	// most_recent = true }`, as in the official builder.
	SourceImageName string `mapstructure:"source_image_name"`
	// A URL Glance imports the base image from (the `web-download` import
	// method). The imported image is deleted at the end of the build.
	ExternalSourceImageURL string `mapstructure:"external_source_image_url"`
	// Disk format of the external image. Defaults to `qcow2`.
	ExternalSourceImageFormat string `mapstructure:"external_source_image_format"`
	// Properties set on the imported external image.
	ExternalSourceImageProperties map[string]string `mapstructure:"external_source_image_properties"`
	// Filters choosing the base image; with `most_recent` the newest of
	// several matches is used, otherwise exactly one must match.
	SourceImageFilters ImageFilter `mapstructure:"source_image_filter"`

	// The flavor ID or name of the build server. Required.
	Flavor string `mapstructure:"flavor" required:"true"`
	// The availability zone of the build server.
	AvailabilityZone string `mapstructure:"availability_zone"`
	// Wait for RackConnect to finish setting the server up.
	RackconnectWait bool `mapstructure:"rackconnect_wait"`
	// A network (ID or name) to allocate a temporary floating IP from; it is
	// released at the end of the build. Ignored, with a warning, when
	// `floating_ip` is set too (as by the official builder).
	FloatingIPNetwork string `mapstructure:"floating_ip_network"`
	// The network (ID or name) of the server port the floating IP is
	// attached to, for servers on several networks. Defaults to the first
	// port.
	InstanceFloatingIPNet string `mapstructure:"instance_floating_ip_net"`
	// An existing floating IP, by ID or by address, to attach to the
	// server. It is detached, not released, at the end.
	FloatingIP string `mapstructure:"floating_ip"`
	// Use a free (`DOWN`, unattached) floating IP of the project instead of
	// allocating one, restricted to `floating_ip_network` when that is set.
	// The build fails when none is free. A reused IP is detached, not
	// released. `floating_ip` wins over it.
	ReuseIPs bool `mapstructure:"reuse_ips"`
	// Security group names for the server.
	SecurityGroups []string `mapstructure:"security_groups"`
	// Network IDs to attach the server to, after `ports`.
	Networks []string `mapstructure:"networks"`
	// Existing port IDs to attach the server to; they become its first
	// NICs, before `networks`.
	Ports []string `mapstructure:"ports"`
	// When no `networks` or `ports` are set, attach the server to a
	// network having a subnet inside one of these CIDRs.
	NetworkDiscoveryCIDRs []string `mapstructure:"network_discovery_cidrs"`
	// User data passed to the server. Ignored (with a warning) when
	// `user_data_file` is set, as in the official builder.
	UserData string `mapstructure:"user_data"`
	// A file whose contents are the server's user data.
	UserDataFile string `mapstructure:"user_data_file"`
	// The server's name, which cloud-init also makes its hostname. Defaults
	// to `image_name` (or `packer_<build uuid>` with `skip_create_image`
	// and no `image_name`).
	InstanceName string `mapstructure:"instance_name"`
	// Nova metadata of the build server. `ansible_init_disable = "true"` is
	// always added unless set here, so StackHPC images do not run
	// ansible-init during the build (it then runs on the image's first
	// real boot).
	InstanceMetadata map[string]string `mapstructure:"instance_metadata"`
	// Delete the server with force-delete.
	ForceDelete bool `mapstructure:"force_delete"`
	// Attach a config drive to the server.
	ConfigDrive bool `mapstructure:"config_drive"`
	// Deprecated: use `floating_ip_network`.
	FloatingIPPool string `mapstructure:"floating_ip_pool" undocumented:"true"`
	// Boot from a Cinder volume made from the base image; the image is then
	// uploaded from the volume. When false, `volume_name`, `volume_type`,
	// `volume_size`, `volume_availability_zone` and `image_disk_format` are
	// ignored with a warning.
	UseBlockStorageVolume bool `mapstructure:"use_blockstorage_volume"`
	// The boot volume's name. Defaults to `image_name`.
	VolumeName string `mapstructure:"volume_name"`
	// The boot volume's type.
	VolumeType string `mapstructure:"volume_type"`
	// The boot volume's size in GiB. Defaults to the flavor's disk or the
	// base image's `min_disk`, whichever is larger (at least 1).
	VolumeSize int `mapstructure:"volume_size"`
	// The boot volume's availability zone. Defaults to `availability_zone`.
	VolumeAvailabilityZone string `mapstructure:"volume_availability_zone"`
	// Accepted for compatibility; unused.
	OpenstackProvider string `mapstructure:"openstack_provider"`
	// Deprecated and ignored, as by the official builder: a floating IP is
	// used when `floating_ip`, `floating_ip_network` or `reuse_ips` is set.
	UseFloatingIP bool `mapstructure:"use_floating_ip"`
	// Extra seconds to wait after the output image is active, as by the
	// official builder (default 0: none). For clouds whose backends report
	// `active` early.
	ImageCreationWait int `mapstructure:"image_creation_wait"`
	// How long the output image (and an imported external source image) may
	// take to become active, for example `2h`. Defaults to the larger of
	// `1h` and `state_timeout`: saving large images is slow. A bound, never
	// a fixed sleep; the wait ends at once if Glance kills the image.
	ImageWaitTimeout time.Duration `mapstructure:"image_wait_timeout"`
	// How long each wait for a server, volume or floating IP state may
	// take, for example `15m`. Defaults to `10m`. A wait ends at once when
	// the resource reports an error.
	StateTimeout time.Duration `mapstructure:"state_timeout"`

	userData  []byte
	buildName string // packer_<uuid>, set by Config.Prepare
	// warns are the compatibility warnings of Prepare.
	warns []string
	// passwordLogin: ssh_password with no key given, so no temporary key
	// is made (as the official builder, unless temporary_key_pair_name
	// asks for one).
	passwordLogin bool
}

// ImageFilter chooses the base image by its attributes.
type ImageFilter struct {
	// Attributes an image must have.
	Filters ImageFilterOptions `mapstructure:"filters"`
	// Take the newest of several matching images.
	MostRecent bool `mapstructure:"most_recent"`
}

// ImageFilterOptions are the attributes an image is matched on.
type ImageFilterOptions struct {
	// The image name. A shell pattern (`*`, `?`, `[...]`), such as
	// `openhpc-RL9-*` for dated image names, is matched by the plugin:
	// Glance itself compares names exactly.
	Name string `mapstructure:"name"`
	// The owning project ID.
	Owner string `mapstructure:"owner"`
	// Tags the image must all have.
	Tags []string `mapstructure:"tags"`
	// `public`, `private`, `shared` or `community`. Another value (the
	// official docs' example says `protected`) is ignored with a warning,
	// as the official builder ignores it.
	Visibility string `mapstructure:"visibility"`
	// Properties the image must have with these values.
	Properties map[string]string `mapstructure:"properties"`
}

// Empty reports whether no filter is set.
func (f *ImageFilterOptions) Empty() bool {
	return f.Name == "" && f.Owner == "" && len(f.Tags) == 0 && f.Visibility == "" && len(f.Properties) == 0
}

// Prepare defaults and checks the server options, without network access;
// the errors come in the order of the options' concerns.
func (c *RunConfig) Prepare(ctx *interpolate.Context) []error {
	errs := c.prepareTimeouts()
	errs = append(errs, c.prepareCommunicator()...)
	errs = append(errs, c.Comm.Prepare(ctx)...)
	errs = append(errs, c.prepareSource()...)
	errs = append(errs, c.prepareServer()...)
	return append(errs, c.prepareVolume()...)
}

// prepareTimeouts defaults and checks the waits' bounds.
func (c *RunConfig) prepareTimeouts() []error {
	var errs []error
	if c.StateTimeout == 0 {
		c.StateTimeout = DefaultStateTimeout
	} else if c.StateTimeout < 0 {
		errs = append(errs, fmt.Errorf("state_timeout: must be > 0, got %s", c.StateTimeout))
	}
	if c.ImageWaitTimeout == 0 {
		c.ImageWaitTimeout = max(time.Hour, c.StateTimeout)
	} else if c.ImageWaitTimeout < 0 {
		errs = append(errs, fmt.Errorf("image_wait_timeout: must be > 0, got %s", c.ImageWaitTimeout))
	}
	if c.ImageCreationWait < 0 {
		errs = append(errs, fmt.Errorf("image_creation_wait: a number of extra seconds to wait after the image is active, must be >= 0, got %d (the bound on the wait is image_wait_timeout)", c.ImageCreationWait))
	}
	return errs
}

// prepareCommunicator checks the key options the communicator needs and names the temporary keypair after the build.
func (c *RunConfig) prepareCommunicator() []error {
	var errs []error
	switch {
	case c.Comm.Type == "ssh" || c.Comm.Type == "":
		if c.Comm.SSHKeyPairName != "" && c.Comm.SSHPrivateKeyFile == "" && !c.Comm.SSHAgentAuth {
			errs = append(errs, errors.New("ssh_keypair_name: needs ssh_private_key_file or ssh_agent_auth = true"))
		}
		c.passwordLogin = c.Comm.SSHPassword != "" && c.Comm.SSHPrivateKeyFile == "" &&
			c.Comm.SSHKeyPairName == "" && c.Comm.SSHTemporaryKeyPairName == ""
		if c.Comm.SSHTemporaryKeyPairName == "" {
			// The Nova keypair and the key's comment (which
			// ssh_clear_authorized_keys looks for) carry the build id.
			c.Comm.SSHTemporaryKeyPairName = c.buildName
		}
	case c.needsWinRMPassword():
		// Nova hands out the administrator password encrypted with the
		// server's keypair, which must therefore be RSA.
		if c.Comm.SSHKeyPairName != "" && c.Comm.SSHPrivateKeyFile == "" {
			errs = append(errs, errors.New("ssh_keypair_name: with the winrm communicator and no winrm_password, ssh_private_key_file is needed to decrypt the administrator password"))
		}
		if c.Comm.SSHTemporaryKeyPairName == "" {
			c.Comm.SSHTemporaryKeyPairName = c.buildName
		}
		if t := c.Comm.SSHTemporaryKeyPairType; t != "" && t != "rsa" {
			errs = append(errs, fmt.Errorf("temporary_key_pair_type: %q cannot decrypt the Windows password Nova keeps; use rsa or set winrm_password", t))
		}
		c.Comm.SSHTemporaryKeyPairType = "rsa"
	}
	return errs
}

// prepareSource checks that exactly one source image option is set, and its filter.
func (c *RunConfig) prepareSource() []error {
	var errs []error
	sources := 0
	for _, set := range []bool{c.SourceImage != "", c.SourceImageName != "", c.ExternalSourceImageURL != "", !c.SourceImageFilters.Filters.Empty()} {
		if set {
			sources++
		}
	}
	if sources != 1 {
		errs = append(errs, fmt.Errorf("source_image: exactly one of source_image, source_image_name, external_source_image_url, source_image_filter is required, got %d", sources))
	}
	if c.ExternalSourceImageURL == "" && (c.ExternalSourceImageFormat != "" || len(c.ExternalSourceImageProperties) > 0) {
		c.warns = append(c.warns, "external_source_image_format, external_source_image_properties: ignored without external_source_image_url")
	}
	if c.ExternalSourceImageFormat == "" {
		c.ExternalSourceImageFormat = "qcow2"
	}
	if _, err := path.Match(c.SourceImageFilters.Filters.Name, ""); err != nil {
		errs = append(errs, fmt.Errorf("source_image_filter.filters.name: %q is not a valid pattern: %v", c.SourceImageFilters.Filters.Name, err))
	}
	if v := c.SourceImageFilters.Filters.Visibility; v != "" && !oneOf(v, "public", "private", "shared", "community") {
		// The official builder drops what Glance would refuse (its own
		// docs' example says "protected"), so such templates exist.
		c.warns = append(c.warns, fmt.Sprintf("source_image_filter.filters.visibility: %q is not one of public, private, shared, community; ignored, as the official builder does", v))
		c.SourceImageFilters.Filters.Visibility = ""
	}
	return errs
}

// prepareServer checks the server's flavor, addresses, user data and metadata.
func (c *RunConfig) prepareServer() []error {
	var errs []error
	if c.Flavor == "" {
		errs = append(errs, errors.New("flavor: required"))
	}
	c.prepareFloatingIP()
	switch c.SSHIPVersion {
	case "", "4", "6":
	default:
		errs = append(errs, fmt.Errorf("ssh_ip_version: %q must be 4 or 6", c.SSHIPVersion))
	}
	for _, cidr := range c.NetworkDiscoveryCIDRs {
		if _, err := netip.ParsePrefix(cidr); err != nil {
			errs = append(errs, fmt.Errorf("network_discovery_cidrs: %q is not a CIDR: %v", cidr, err))
		}
	}
	if c.UserData != "" && c.UserDataFile != "" {
		c.warns = append(c.warns, "user_data: ignored because user_data_file is set (the file wins, as in the official builder)")
	}
	if c.UserDataFile != "" {
		b, err := os.ReadFile(c.UserDataFile)
		if err != nil {
			errs = append(errs, fmt.Errorf("user_data_file: %v", err))
		}
		c.userData = b
	} else if c.UserData != "" {
		c.userData = []byte(c.UserData)
	}
	if c.InstanceMetadata == nil {
		c.InstanceMetadata = map[string]string{}
	}
	if _, ok := c.InstanceMetadata["ansible_init_disable"]; !ok {
		c.InstanceMetadata["ansible_init_disable"] = "true"
	}
	errs = append(errs, checkMetadata("instance_metadata", c.InstanceMetadata)...)
	return errs
}

// prepareVolume checks the boot volume options, ignored (as the official builder does) without use_blockstorage_volume.
func (c *RunConfig) prepareVolume() []error {
	var errs []error
	if c.VolumeSize < 0 {
		errs = append(errs, fmt.Errorf("volume_size: must be >= 0, got %d", c.VolumeSize))
	}
	if !c.UseBlockStorageVolume {
		// The official builder ignores them, and the appliance's template
		// always sets volume_name and volume_size.
		var ignored []string
		for _, f := range []struct {
			name  string
			set   bool
			reset func()
		}{
			{"volume_name", c.VolumeName != "", func() { c.VolumeName = "" }},
			{"volume_type", c.VolumeType != "", func() { c.VolumeType = "" }},
			{"volume_size", c.VolumeSize != 0, func() { c.VolumeSize = 0 }},
			{"volume_availability_zone", c.VolumeAvailabilityZone != "", func() { c.VolumeAvailabilityZone = "" }},
		} {
			if f.set {
				ignored = append(ignored, f.name)
				f.reset()
			}
		}
		if len(ignored) > 0 {
			c.warns = append(c.warns, fmt.Sprintf("%s: ignored because use_blockstorage_volume is false", strings.Join(ignored, ", ")))
		}
	} else if c.VolumeAvailabilityZone == "" {
		c.VolumeAvailabilityZone = c.AvailabilityZone
	}
	return errs
}

// prepareFloatingIP resolves the floating IP options as the official
// builder does: floating_ip wins over reuse_ips, which wins over
// allocating from floating_ip_network; use_floating_ip alone does nothing.
func (c *RunConfig) prepareFloatingIP() {
	if c.FloatingIPPool != "" {
		if c.FloatingIPNetwork == "" {
			c.FloatingIPNetwork = c.FloatingIPPool
			c.warns = append(c.warns, "floating_ip_pool: deprecated, use floating_ip_network")
		} else {
			c.warns = append(c.warns, fmt.Sprintf("floating_ip_pool: ignored, floating_ip_network = %q is used", c.FloatingIPNetwork))
		}
	}
	if c.FloatingIP != "" && c.FloatingIPNetwork != "" {
		c.warns = append(c.warns, fmt.Sprintf("floating_ip_network: ignored, the given floating_ip %q is used", c.FloatingIP))
	}
	if c.FloatingIP != "" && c.ReuseIPs {
		c.warns = append(c.warns, fmt.Sprintf("reuse_ips: ignored, the given floating_ip %q is used", c.FloatingIP))
	}
	if c.UseFloatingIP && c.FloatingIP == "" && c.FloatingIPNetwork == "" && !c.ReuseIPs {
		c.warns = append(c.warns, "use_floating_ip: deprecated and ignored (as by the official builder); set floating_ip_network, floating_ip or reuse_ips")
	}
	c.UseFloatingIP = c.FloatingIP != "" || c.FloatingIPNetwork != "" || c.ReuseIPs
}

// checkMetadata applies the Nova and Glance limit of 255 characters per
// key and value.
func checkMetadata(field string, m map[string]string) []error {
	var errs []error
	for k, v := range m {
		if len(k) > 255 {
			errs = append(errs, fmt.Errorf("%s: key %.20q... is longer than 255 characters", field, k))
		}
		if len(v) > 255 {
			errs = append(errs, fmt.Errorf("%s: value of %q is longer than 255 characters", field, k))
		}
	}
	return errs
}

func oneOf(v string, allowed ...string) bool {
	for _, a := range allowed {
		if v == a {
			return true
		}
	}
	return false
}

// needsWinRMPassword reports whether the WinRM password is to be fetched
// from Nova (os-server-password), as the official builder does when
// winrm_password is not set.
func (c *RunConfig) needsWinRMPassword() bool {
	return c.Comm.Type == "winrm" && c.Comm.WinRMPassword == ""
}
