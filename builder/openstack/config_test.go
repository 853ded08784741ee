package openstack

import (
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/hashicorp/packer-plugin-sdk/packer"
)

// clearOSEnv keeps the developer's OpenStack environment out of the tests.
func clearOSEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "OS_") || strings.HasPrefix(k, "SDK_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
}

func baseRaw() map[string]any {
	return map[string]any{
		"identity_endpoint": "http://127.0.0.1:9/v3",
		"username":          "builder",
		"password":          "secret-b7",
		"tenant_name":       "project",
		"domain_name":       "Default",
		"image_name":        "rocky-fat",
		"source_image":      "7b5f7c4e-0d6c-4b4e-9d0e-6f3f3a1f0c11",
		"flavor":            "m1.small",
		"ssh_username":      "rocky",
	}
}

func with(raw map[string]any, kv ...any) map[string]any {
	for i := 0; i < len(kv); i += 2 {
		k := kv[i].(string)
		if kv[i+1] == nil {
			delete(raw, k)
			continue
		}
		raw[k] = kv[i+1]
	}
	return raw
}

func prepare(t *testing.T, raw map[string]any) (*Config, []string, error) {
	t.Helper()
	var c Config
	warns, err := c.Prepare(raw)
	return &c, warns, err
}

func errorStrings(err error) []string {
	var me *packer.MultiError
	if errors.As(err, &me) {
		var out []string
		for _, e := range me.Errors {
			out = append(out, e.Error())
		}
		return out
	}
	if err == nil {
		return nil
	}
	return []string{err.Error()}
}

func TestPrepareValid(t *testing.T) {
	clearOSEnv(t)
	c, warns, err := prepare(t, baseRaw())
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	if len(warns) != 0 {
		t.Errorf("warnings: %v", warns)
	}
	if !c.authOpts.AllowReauth {
		t.Error("AllowReauth is off: long builds would fail when the token expires")
	}
}

func TestPrepareBadConfigs(t *testing.T) {
	long := strings.Repeat("x", 256)
	dir := t.TempDir()
	certOnly := filepath.Join(dir, "cert.pem")
	if err := os.WriteFile(certOnly, []byte("not a cert"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		raw  map[string]any
		want string
	}{
		{"no source", with(baseRaw(), "source_image", nil),
			"source_image: exactly one of source_image, source_image_name, external_source_image_url, source_image_filter is required, got 0"},
		{"two sources", with(baseRaw(), "source_image_name", "Rocky-9"),
			"source_image: exactly one of source_image, source_image_name, external_source_image_url, source_image_filter is required, got 2"},
		{"filter and id", with(baseRaw(), "source_image_filter", map[string]any{"filters": map[string]any{"name": "x"}}),
			"source_image: exactly one of source_image, source_image_name, external_source_image_url, source_image_filter is required, got 2"},
		{"filter name pattern", with(baseRaw(), "source_image", nil, "source_image_filter", map[string]any{"filters": map[string]any{"name": "openhpc-[RL9-*"}}),
			`source_image_filter.filters.name: "openhpc-[RL9-*" is not a valid pattern: syntax error in pattern`},
		{"bad disk format", with(baseRaw(), "image_disk_format", "zip", "use_blockstorage_volume", true),
			`image_disk_format: "zip" is not one of ami, ari, aki, vhd, vhdx, vmdk, raw, qcow2, vdi, ploop, iso`},
		{"ssh ip version", with(baseRaw(), "ssh_ip_version", "5"),
			`ssh_ip_version: "5" must be 4 or 6`},
		{"endpoint type", with(baseRaw(), "endpoint_type", "private"),
			`endpoint_type: "private" is not one of public, internal, admin (or publicURL, internalURL, adminURL)`},
		{"image visibility", with(baseRaw(), "image_visibility", "everyone"),
			`image_visibility: "everyone" is not one of public, private, shared, community`},
		{"metadata long value", with(baseRaw(), "metadata", map[string]string{"k": long}),
			`metadata: value of "k" is longer than 255 characters`},
		{"metadata long key", with(baseRaw(), "metadata", map[string]string{long: "v"}),
			`metadata: key "xxxxxxxxxxxxxxxxxxxx"... is longer than 255 characters`},
		{"instance metadata long value", with(baseRaw(), "instance_metadata", map[string]string{"k": long}),
			`instance_metadata: value of "k" is longer than 255 characters`},
		{"image properties long value", with(baseRaw(), "image_properties", map[string]string{"k": long}),
			`image_properties: value of "k" is longer than 255 characters`},
		{"property also skipped", with(baseRaw(), "image_properties", map[string]string{"signature_verified": "True"}),
			`image_properties: "signature_verified" is also in skip_inherited_properties`},
		{"property is attribute", with(baseRaw(), "image_properties", map[string]string{"min_disk": "20"}),
			`image_properties: "min_disk" is an image attribute, not a property; use its own option`},
		{"min disk", with(baseRaw(), "image_min_disk", -1),
			"image_min_disk: must be >= 0, got -1"},
		{"volume size", with(baseRaw(), "use_blockstorage_volume", true, "volume_size", -5),
			"volume_size: must be >= 0, got -5"},
		{"user data file missing", with(baseRaw(), "user_data_file", filepath.Join(dir, "nope")),
			"user_data_file: open " + filepath.Join(dir, "nope") + ": no such file or directory"},
		{"state timeout negative", with(baseRaw(), "state_timeout", "-1s"),
			"state_timeout: must be > 0, got -1s"},
		{"image creation wait negative", with(baseRaw(), "image_creation_wait", -5),
			"image_creation_wait: a number of extra seconds to wait after the image is active, must be >= 0, got -5 (the bound on the wait is image_wait_timeout)"},
		{"image wait timeout negative", with(baseRaw(), "image_wait_timeout", "-1m"),
			"image_wait_timeout: must be > 0, got -1m0s"},
		{"winrm password with ed25519 key", with(baseRaw(), "communicator", "winrm", "winrm_username", "Administrator", "temporary_key_pair_type", "ed25519"),
			`temporary_key_pair_type: "ed25519" cannot decrypt the Windows password Nova keeps; use rsa or set winrm_password`},
		{"winrm password with keypair and no key", with(baseRaw(), "communicator", "winrm", "winrm_username", "Administrator", "ssh_keypair_name", "win"),
			"ssh_keypair_name: with the winrm communicator and no winrm_password, ssh_private_key_file is needed to decrypt the administrator password"},
		{"keypair without key", with(baseRaw(), "ssh_keypair_name", "mykey"),
			"ssh_keypair_name: needs ssh_private_key_file or ssh_agent_auth = true"},
		{"no flavor", with(baseRaw(), "flavor", nil),
			"flavor: required"},
		{"no image name", with(baseRaw(), "image_name", nil),
			"image_name: required"},
		{"no identity endpoint", with(baseRaw(), "identity_endpoint", nil),
			"identity_endpoint: required (or OS_AUTH_URL, or a clouds.yaml entry named by cloud/OS_CLOUD)"},
		{"no password", with(baseRaw(), "password", nil),
			"password: required with username or user_id"},
		{"no user", with(baseRaw(), "username", nil),
			"username: one of username, user_id, token or application_credential_id is required"},
		{"app credential without secret", with(baseRaw(), "application_credential_id", "ac1"),
			"application_credential_secret: required with application_credential_id or application_credential_name"},
		{"app credential name without user", with(baseRaw(), "username", nil, "application_credential_name", "ac", "application_credential_secret", "ac-secret-9d2f"),
			"application_credential_name: needs username or user_id (or use application_credential_id)"},
		{"cert without key", with(baseRaw(), "cert", certOnly),
			"key: required with cert"},
		{"key without cert", with(baseRaw(), "key", certOnly),
			"cert: required with key"},
		{"cacert unreadable", with(baseRaw(), "cacert", filepath.Join(dir, "nope.pem")),
			"cacert: open " + filepath.Join(dir, "nope.pem") + ": no such file or directory"},
		{"cacert not pem", with(baseRaw(), "cacert", certOnly),
			"cacert: " + certOnly + " holds no PEM certificate"},
		{"discovery cidr", with(baseRaw(), "network_discovery_cidrs", []string{"10.0.0.0"}),
			`network_discovery_cidrs: "10.0.0.0" is not a CIDR: netip.ParsePrefix("10.0.0.0"): no '/'`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clearOSEnv(t)
			_, _, err := prepare(t, tc.raw)
			if err == nil {
				t.Fatalf("Prepare succeeded, want error %q", tc.want)
			}
			got := errorStrings(err)
			for _, g := range got {
				if g == tc.want {
					return
				}
			}
			t.Errorf("errors %q\ndo not include %q", got, tc.want)
		})
	}
}

// Templates the official builder accepts are accepted, as it takes them,
// with a warning where they are probably wrong.
func TestPrepareAcceptsWhatOfficialAccepts(t *testing.T) {
	ud := filepath.Join(t.TempDir(), "ud.yaml")
	if err := os.WriteFile(ud, []byte("#cloud-config from the file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		raw   map[string]any
		warn  string
		check func(*Config) bool
	}{
		{"filter visibility protected", with(baseRaw(), "source_image", nil, "source_image_filter", map[string]any{"filters": map[string]any{"name": "Rocky-9", "visibility": "protected"}}),
			`source_image_filter.filters.visibility: "protected" is not one of public, private, shared, community; ignored, as the official builder does`,
			func(c *Config) bool {
				return c.SourceImageFilters.Filters.Visibility == "" && c.SourceImageFilters.Filters.Name == "Rocky-9"
			}},
		{"user_data and user_data_file", with(baseRaw(), "user_data", "#cloud-config inline", "user_data_file", ud),
			"user_data: ignored because user_data_file is set (the file wins, as in the official builder)",
			func(c *Config) bool { return string(c.userData) == "#cloud-config from the file\n" }},
		{"auto accept without members", with(baseRaw(), "image_auto_accept_members", true),
			"image_auto_accept_members: ignored without image_members",
			func(c *Config) bool { return !c.ImageAutoAcceptMembers }},
		{"members on a private image", with(baseRaw(), "image_visibility", "private", "image_members", []string{"p1"}),
			`image_members: Glance gives members only to shared images, and image_visibility is "private": the build will fail when it adds them`,
			func(c *Config) bool { return c.ImageVisibility == "private" && len(c.ImageMembers) == 1 }},
		{"source_image_name with most_recent", with(baseRaw(), "source_image", nil, "source_image_name", "Rocky-9", "source_image_filter", map[string]any{"most_recent": true}),
			"", func(c *Config) bool { return c.SourceImageFilters.MostRecent }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearOSEnv(t)
			c, warns, err := prepare(t, tc.raw)
			if err != nil {
				t.Fatalf("Prepare refused a template the official builder accepts: %v", err)
			}
			if tc.warn != "" && !slices.Contains(warns, tc.warn) {
				t.Errorf("warnings %q lack %q", warns, tc.warn)
			}
			if !tc.check(c) {
				t.Errorf("prepared config not as the official builder takes it: %+v", c.RunConfig)
			}
		})
	}
}

func TestPrepareCollectsAllErrors(t *testing.T) {
	clearOSEnv(t)
	_, _, err := prepare(t, with(baseRaw(), "flavor", nil, "ssh_ip_version", "7", "image_min_disk", -2))
	got := errorStrings(err)
	for _, want := range []string{"flavor: required", `ssh_ip_version: "7" must be 4 or 6`, "image_min_disk: must be >= 0, got -2"} {
		found := false
		for _, g := range got {
			found = found || g == want
		}
		if !found {
			t.Errorf("missing %q in %q", want, got)
		}
	}
}

// Prepare must not touch the network, so `packer validate` needs no cloud.
func TestPrepareMakesNoNetworkCall(t *testing.T) {
	clearOSEnv(t)
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	if _, _, err := prepare(t, with(baseRaw(), "identity_endpoint", srv.URL+"/v3", "source_image", nil,
		"source_image_name", "Rocky-9", "floating_ip_network", "public", "network_discovery_cidrs", []string{"10.0.0.0/8"})); err != nil {
		t.Fatal(err)
	}
	b := &Builder{}
	if _, _, err := b.Prepare(with(baseRaw(), "identity_endpoint", srv.URL+"/v3")); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("Prepare made %d HTTP requests, want 0", n)
	}
}

func TestPrepareDefaults(t *testing.T) {
	clearOSEnv(t)
	c, _, err := prepare(t, with(baseRaw(), "use_blockstorage_volume", true))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.InstanceMetadata["ansible_init_disable"]; got != "true" {
		t.Errorf("ansible_init_disable = %q, want injected \"true\"", got)
	}
	if len(c.SkipInheritedProperties) != 1 || c.SkipInheritedProperties[0] != "signature_verified" {
		t.Errorf("skip_inherited_properties = %q, want [signature_verified]", c.SkipInheritedProperties)
	}
	if c.StateTimeout != 10*time.Minute {
		t.Errorf("state_timeout = %s, want 10m", c.StateTimeout)
	}
	if c.ImageWaitTimeout != time.Hour || c.ImageCreationWait != 0 {
		t.Errorf("image_wait_timeout = %s, image_creation_wait = %d, want 1h and 0", c.ImageWaitTimeout, c.ImageCreationWait)
	}
	if c.InstanceName != "rocky-fat" {
		t.Errorf("instance_name = %q, want the image name", c.InstanceName)
	}
	if c.Comm.SSHTemporaryKeyPairName != "packer_"+c.buildID {
		t.Errorf("temporary key pair name = %q, want packer_<build id %s>", c.Comm.SSHTemporaryKeyPairName, c.buildID)
	}
	if c.ImageMetadata["image_type"] != "image" {
		t.Errorf("metadata = %v, want the official default image_type = image", c.ImageMetadata)
	}
	if c.VolumeName != "rocky-fat" {
		t.Errorf("volume_name = %q, want the image name", c.VolumeName)
	}
	if c.endpointOpts.Availability != gophercloud.AvailabilityPublic {
		t.Errorf("interface = %q, want public", c.endpointOpts.Availability)
	}

	// A template's own value wins.
	c, _, err = prepare(t, with(baseRaw(), "instance_metadata", map[string]string{"ansible_init_disable": "false"},
		"skip_inherited_properties", []string{}, "state_timeout", "25m"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.InstanceMetadata["ansible_init_disable"]; got != "false" {
		t.Errorf("ansible_init_disable = %q, want the template's \"false\"", got)
	}
	if len(c.SkipInheritedProperties) != 0 {
		t.Errorf("skip_inherited_properties = %q, want empty as set", c.SkipInheritedProperties)
	}
	if c.StateTimeout != 25*time.Minute || c.ImageWaitTimeout != time.Hour {
		t.Errorf("state_timeout %s image_wait_timeout %s", c.StateTimeout, c.ImageWaitTimeout)
	}
}

func TestPrepareEnvironment(t *testing.T) {
	clearOSEnv(t)
	t.Setenv("OS_AUTH_URL", "https://keystone.example:5000/v3")
	t.Setenv("OS_USERNAME", "envuser")
	t.Setenv("OS_PASSWORD", "envpass")
	t.Setenv("OS_PROJECT_NAME", "envproject")
	t.Setenv("OS_USER_DOMAIN_NAME", "envdomain")
	t.Setenv("OS_REGION_NAME", "RegionEnv")
	t.Setenv("OS_INTERFACE", "internal")
	c, _, err := prepare(t, with(baseRaw(), "identity_endpoint", nil, "username", nil, "password", nil, "tenant_name", nil, "domain_name", nil))
	if err != nil {
		t.Fatal(err)
	}
	a := c.authOpts
	if a.IdentityEndpoint != "https://keystone.example:5000/v3" || a.Username != "envuser" || a.Password != "envpass" ||
		a.TenantName != "envproject" || a.DomainName != "envdomain" {
		t.Errorf("auth options from env: %+v", a)
	}
	if c.endpointOpts.Region != "RegionEnv" || c.endpointOpts.Availability != gophercloud.AvailabilityInternal {
		t.Errorf("endpoint options from env: %+v", c.endpointOpts)
	}

	// Application credentials: no project scope may be sent with them.
	clearOSEnv(t)
	t.Setenv("OS_APPLICATION_CREDENTIAL_ID", "acid")
	t.Setenv("OS_APPLICATION_CREDENTIAL_SECRET", "acsecret")
	c, _, err = prepare(t, with(baseRaw(), "username", nil, "password", nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.authOpts.ApplicationCredentialID != "acid" || c.authOpts.TenantName != "" || !c.authOpts.AllowReauth {
		t.Errorf("application credential options: %+v", c.authOpts)
	}
}

func writeCloudsYAML(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "clouds.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPrepareCloudsYAML(t *testing.T) {
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	defer tlsSrv.Close()
	caPath := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}

	path := writeCloudsYAML(t, `
clouds:
  lab:
    auth:
      auth_url: https://keystone.lab:5000/v3
      username: labuser
      password: labpass
      project_name: labproject
      user_domain_name: Default
    region_name: RegionTwo
    interface: internal
    verify: false
  prod:
    auth:
      auth_url: https://keystone.prod:5000/v3
      application_credential_id: prodac
      application_credential_secret: prodsecret
    region_name: RegionProd
    cacert: `+caPath+`
`)
	base := func() map[string]any {
		return with(baseRaw(), "identity_endpoint", nil, "username", nil, "password", nil, "tenant_name", nil, "domain_name", nil)
	}

	clearOSEnv(t)
	t.Setenv("OS_CLIENT_CONFIG_FILE", path)
	c, _, err := prepare(t, with(base(), "cloud", "lab"))
	if err != nil {
		t.Fatal(err)
	}
	if c.authOpts.IdentityEndpoint != "https://keystone.lab:5000/v3" || c.authOpts.Username != "labuser" || c.authOpts.TenantName != "labproject" {
		t.Errorf("auth from clouds.yaml: %+v", c.authOpts)
	}
	if c.endpointOpts.Region != "RegionTwo" || c.Region != "RegionTwo" {
		t.Errorf("region = %q / %q, want RegionTwo", c.endpointOpts.Region, c.Region)
	}
	if c.endpointOpts.Availability != gophercloud.AvailabilityInternal {
		t.Errorf("interface = %q, want internal", c.endpointOpts.Availability)
	}
	if c.tlsConfig == nil || !c.tlsConfig.InsecureSkipVerify {
		t.Error("verify: false was ignored")
	}
	if !c.authOpts.AllowReauth {
		t.Error("AllowReauth is off")
	}

	// Template options override the file; OS_CLOUD selects the entry.
	clearOSEnv(t)
	t.Setenv("OS_CLIENT_CONFIG_FILE", path)
	t.Setenv("OS_CLOUD", "prod")
	c, _, err = prepare(t, with(base(), "region", "RegionOverride"))
	if err != nil {
		t.Fatal(err)
	}
	if c.endpointOpts.Region != "RegionOverride" {
		t.Errorf("region = %q, want the template's", c.endpointOpts.Region)
	}
	if c.authOpts.ApplicationCredentialID != "prodac" || c.authOpts.ApplicationCredentialSecret != "prodsecret" {
		t.Errorf("application credential from clouds.yaml: %+v", c.authOpts)
	}
	if c.tlsConfig == nil || c.tlsConfig.RootCAs == nil || c.tlsConfig.InsecureSkipVerify {
		t.Errorf("cacert from clouds.yaml was ignored: %+v", c.tlsConfig)
	}

	// A missing entry is reported against the cloud option.
	clearOSEnv(t)
	t.Setenv("OS_CLIENT_CONFIG_FILE", path)
	_, _, err = prepare(t, with(base(), "cloud", "nope"))
	want := `cloud: "nope": cloud "nope" not found in clouds.yaml`
	if got := errorStrings(err); len(got) != 1 || got[0] != want {
		t.Errorf("errors %q, want [%q]", got, want)
	}
}
