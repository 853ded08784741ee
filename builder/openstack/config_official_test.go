package openstack

import (
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/redact"
)

// What the official builder accepts, it accepts with the same meaning; the
// options it ignores are ignored here too, but with a warning.
func TestPrepareOfficialMeanings(t *testing.T) {
	cases := []struct {
		name  string
		raw   map[string]any
		check func(t *testing.T, c *Config)
		warns []string
	}{
		{"image_creation_wait is seconds after active", with(baseRaw(), "image_creation_wait", 30),
			func(t *testing.T, c *Config) {
				if c.ImageCreationWait != 30 || c.ImageWaitTimeout <= 0 {
					t.Errorf("image_creation_wait %d, image_wait_timeout %s", c.ImageCreationWait, c.ImageWaitTimeout)
				}
			}, nil},
		{"instance_name defaults to image_name", with(baseRaw(), "image_name", "openhpc-251122-1350-abcdef12"),
			func(t *testing.T, c *Config) {
				if c.InstanceName != "openhpc-251122-1350-abcdef12" {
					t.Errorf("instance_name %q", c.InstanceName)
				}
			}, nil},
		{"instance_name set wins", with(baseRaw(), "instance_name", "vm"),
			func(t *testing.T, c *Config) {
				if c.InstanceName != "vm" {
					t.Errorf("instance_name %q", c.InstanceName)
				}
			}, nil},
		{"volume options without a volume are ignored",
			with(baseRaw(), "use_blockstorage_volume", false, "volume_name", "v", "volume_size", 20, "volume_type", "ssd", "volume_availability_zone", "az1", "image_disk_format", "raw"),
			func(t *testing.T, c *Config) {
				if c.VolumeName != "" || c.VolumeSize != 0 || c.VolumeType != "" || c.VolumeAvailabilityZone != "" || c.ImageDiskFormat != "" {
					t.Errorf("volume options kept: %q %d %q %q %q", c.VolumeName, c.VolumeSize, c.VolumeType, c.VolumeAvailabilityZone, c.ImageDiskFormat)
				}
			},
			[]string{`image_disk_format: "raw" ignored because use_blockstorage_volume is false (a snapshot keeps the server disk's format)`,
				"volume_name, volume_type, volume_size, volume_availability_zone: ignored because use_blockstorage_volume is false"}},
		{"floating_ip wins over floating_ip_network", with(baseRaw(), "floating_ip", "5d0c4f0e-6a39-4c1e-9d3b-0f0a6f5c2b71", "floating_ip_network", "public"),
			func(t *testing.T, c *Config) {
				if !c.UseFloatingIP || c.FloatingIP != "5d0c4f0e-6a39-4c1e-9d3b-0f0a6f5c2b71" {
					t.Errorf("use_floating_ip %v floating_ip %q", c.UseFloatingIP, c.FloatingIP)
				}
			},
			[]string{`floating_ip_network: ignored, the given floating_ip "5d0c4f0e-6a39-4c1e-9d3b-0f0a6f5c2b71" is used`}},
		{"reuse_ips alone", with(baseRaw(), "reuse_ips", true),
			func(t *testing.T, c *Config) {
				if !c.UseFloatingIP {
					t.Error("reuse_ips does not use a floating IP")
				}
			}, nil},
		{"use_floating_ip alone is a no-op", with(baseRaw(), "use_floating_ip", true),
			func(t *testing.T, c *Config) {
				if c.UseFloatingIP {
					t.Error("use_floating_ip alone asks for a floating IP; the official builder attaches none")
				}
			},
			[]string{"use_floating_ip: deprecated and ignored (as by the official builder); set floating_ip_network, floating_ip or reuse_ips"}},
		{"floating_ip_pool is floating_ip_network", with(baseRaw(), "floating_ip_pool", "public"),
			func(t *testing.T, c *Config) {
				if c.FloatingIPNetwork != "public" || !c.UseFloatingIP {
					t.Errorf("floating_ip_network %q", c.FloatingIPNetwork)
				}
			},
			[]string{"floating_ip_pool: deprecated, use floating_ip_network"}},
		{"image_visibility in any case", with(baseRaw(), "image_visibility", "Private"),
			func(t *testing.T, c *Config) {
				if c.ImageVisibility != "private" {
					t.Errorf("image_visibility %q", c.ImageVisibility)
				}
			}, nil},
		{"image_type default kept when set", with(baseRaw(), "metadata", map[string]string{"image_type": "snapshot", "a": "b"}),
			func(t *testing.T, c *Config) {
				if c.ImageMetadata["image_type"] != "snapshot" || c.ImageMetadata["a"] != "b" {
					t.Errorf("metadata %v", c.ImageMetadata)
				}
			}, nil},
		{"image_type left to image_properties", with(baseRaw(), "image_properties", map[string]string{"image_type": "golden"}),
			func(t *testing.T, c *Config) {
				if _, ok := c.ImageMetadata["image_type"]; ok {
					t.Errorf("metadata %v also sets image_type", c.ImageMetadata)
				}
			}, nil},
		{"winrm without password gets an RSA key pair", with(baseRaw(), "communicator", "winrm", "winrm_username", "Administrator"),
			func(t *testing.T, c *Config) {
				if c.Comm.SSHTemporaryKeyPairType != "rsa" || c.Comm.SSHTemporaryKeyPairName == "" || !c.needsWinRMPassword() {
					t.Errorf("key pair %q %q", c.Comm.SSHTemporaryKeyPairType, c.Comm.SSHTemporaryKeyPairName)
				}
			}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clearOSEnv(t)
			c, warns, err := prepare(t, tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
			if strings.Join(warns, "\n") != strings.Join(tc.warns, "\n") {
				t.Errorf("warnings\n%q\nwant\n%q", warns, tc.warns)
			}
		})
	}
}

func TestPrepareLegacySDKEnvironment(t *testing.T) {
	clearOSEnv(t)
	t.Setenv("SDK_USERNAME", "sdkuser")
	t.Setenv("SDK_PASSWORD", "sdk-pass-7f3a")
	t.Setenv("SDK_REGION", "RegionSDK")
	t.Setenv("SDK_PROJECT", "sdkproject")
	t.Setenv("SDK_PROVIDER", "https://keystone.sdk.example:5000/v3")
	t.Setenv("OS_USERNAME", "osuser")
	t.Setenv("OS_PASSWORD", "os-pass")
	t.Setenv("OS_USER_DOMAIN_NAME", "Default")
	c, _, err := prepare(t, with(baseRaw(), "identity_endpoint", nil, "username", nil, "password", nil, "tenant_name", nil))
	if err != nil {
		t.Fatal(err)
	}
	a := c.authOpts
	if a.Username != "sdkuser" || a.Password != "sdk-pass-7f3a" || a.TenantName != "sdkproject" || a.IdentityEndpoint != "https://keystone.sdk.example:5000/v3" || c.endpointOpts.Region != "RegionSDK" {
		t.Errorf("SDK_* not honoured ahead of OS_*: %+v region %q", a, c.endpointOpts.Region)
	}
	// The template still wins.
	c, _, err = prepare(t, with(baseRaw(), "identity_endpoint", nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.authOpts.Username != "builder" || c.authOpts.Password != "secret-b7" {
		t.Errorf("template lost to SDK_*: %+v", c.authOpts)
	}
	t.Setenv("SDK_TENANT_NAME", "tn")
	t.Setenv("SDK_PROJECT", "")
	t.Setenv("SDK_PROVIDER", "rackspace-us")
	t.Setenv("OS_AUTH_URL", "https://keystone.os.example/v3")
	c, _, err = prepare(t, with(baseRaw(), "identity_endpoint", nil, "tenant_name", nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.authOpts.TenantName != "tn" || c.authOpts.IdentityEndpoint != "https://keystone.os.example/v3" {
		t.Errorf("SDK_TENANT_NAME / non-URL SDK_PROVIDER: %+v", c.authOpts)
	}
}

// The password, token and application credential secret never reach the
// log, whatever their source.
func TestPrepareRegistersSecrets(t *testing.T) {
	clearOSEnv(t)
	t.Setenv("OS_APPLICATION_CREDENTIAL_SECRET", "app-secret-91c2")
	for _, raw := range []map[string]any{
		with(baseRaw(), "password", "pw-secret-5d1e"),
		with(baseRaw(), "password", nil, "username", nil, "token", "tok-secret-77aa"),
		with(baseRaw(), "password", nil, "username", nil, "application_credential_id", "ac1"),
	} {
		if _, _, err := prepare(t, raw); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []string{"pw-secret-5d1e", "tok-secret-77aa", "app-secret-91c2"} {
		if got := redact.String("x " + s + " y"); strings.Contains(got, s) {
			t.Errorf("%s is not filtered: %q", s, got)
		}
	}
}
