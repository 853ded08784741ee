// Package realcloud is the real-OpenStack tier of the test world: Debian
// 12's Keystone, Glance, Placement, Nova, Neutron and Cinder on loopback
// (make realcloud-up, see docs/lab.md). This package renders their
// configuration, seeds the catalog and the resources a build needs, writes
// clouds.yaml and the env file like the lab's, and counts what is left in
// the cloud so tests can assert that a build leaked nothing.
//
// The daemons themselves are started by up.sh; the drivers they load (Nova's
// guest driver, a file-backed Cinder driver) are in python/fatcloud.
package realcloud

import (
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"
)

// Host is the only address the tier listens on.
const Host = "127.0.0.1"

// Ports are the fixed loopback ports of the tier (lib.sh has the same).
type Ports struct {
	Keystone, Glance, Nova, Placement, Neutron, Cinder int
	// Memcached is the cache Keystone's processes and the services'
	// token checks share.
	Memcached int
	// Metadata is Nova's metadata API (the guests' 169.254.169.254).
	Metadata int
}

// DefaultPorts are the tier's ports: high and fixed, away from the lab's,
// which it picks at random.
var DefaultPorts = Ports{Keystone: 29500, Glance: 29501, Nova: 29502, Placement: 29503, Neutron: 29504, Cinder: 29505, Memcached: 29510, Metadata: 29511}

// Names of what the tier creates.
const (
	CloudName       = "realcloud"
	AdminCloudName  = "realcloud-admin"
	MemberUser      = "realcloud"
	MemberProject   = "realcloud"
	ShareProject    = "realcloud-share"
	ServiceUser     = "realcloud-service"
	ServiceProject  = "service"
	BaseImageName   = "Rocky-9-GenericCloud-Base-9.6"
	TenantNetwork   = "realcloud-net"
	TenantSubnet    = "realcloud-subnet"
	FloatingNetwork = "public"
	RouterName      = "realcloud-router"
	// SSHSecurityGroup is the member's group that opens TCP 22 (the
	// builds with SSH name it in security_groups).
	SSHSecurityGroup = "realcloud-ssh"
	Region           = "RegionOne"
	// The authentication matrix's user and its project, each in a domain
	// of its own (secret "auth").
	AuthUser          = "realcloud-alice"
	AuthUserDomain    = "realcloud-users"
	AuthProject       = "realcloud-science"
	AuthProjectDomain = "realcloud-projects"
)

// TokenCacheSeconds is how long the services trust a token Keystone has
// validated (keystonemiddleware's token_cache_time): a revoked token is
// refused by every service at most this long after the revocation.
const TokenCacheSeconds = 10

// Values fill the configuration templates.
type Values struct {
	Host, State, DB, RPC, AuthURL string
	ServiceUser, ServicePassword  string
	// MetadataSecret is Nova's metadata_proxy_shared_secret.
	MetadataSecret    string
	Ports             Ports
	TokenCacheSeconds int // TokenCacheSeconds unless set
	// GuestInterface is the compute host's interface into the guests'
	// network (GuestInterface unless set).
	GuestInterface string
	// ExternalBridge is the floating IPs' network's bridge
	// (ExternalBridge unless set).
	ExternalBridge string
}

//go:embed etc/*.tmpl
var templates embed.FS

// configFiles maps each template to the file it becomes below the etc
// directory (placement reads a directory: it gets its own).
var configFiles = map[string]string{
	"keystone.conf.tmpl":         "keystone.conf",
	"placement.conf.tmpl":        "placement/placement.conf",
	"glance-api.conf.tmpl":       "glance-api.conf",
	"nova.conf.tmpl":             "nova.conf",
	"neutron.conf.tmpl":          "neutron.conf",
	"ml2_conf.ini.tmpl":          "ml2_conf.ini",
	"linuxbridge_agent.ini.tmpl": "linuxbridge_agent.ini",
	"dhcp_agent.ini.tmpl":        "dhcp_agent.ini",
	"l3_agent.ini.tmpl":          "l3_agent.ini",
	"metadata_agent.ini.tmpl":    "metadata_agent.ini",
	"cinder.conf.tmpl":           "cinder.conf",
}

// WriteConfigs renders every service's configuration into etc, readable
// only by root (they hold the database and service passwords).
func WriteConfigs(etc string, v Values) error {
	if v.AuthURL == "" {
		v.AuthURL = AuthURL(v.Ports)
	}
	if v.TokenCacheSeconds == 0 {
		v.TokenCacheSeconds = TokenCacheSeconds
	}
	if v.GuestInterface == "" {
		v.GuestInterface = GuestInterface
	}
	if v.ExternalBridge == "" {
		v.ExternalBridge = ExternalBridge
	}
	for _, field := range []struct{ name, val string }{{"state dir", v.State}, {"database URL", v.DB}, {"transport URL", v.RPC}, {"service password", v.ServicePassword}, {"metadata secret", v.MetadataSecret}} {
		if field.val == "" {
			return fmt.Errorf("realcloud: configs: no %s", field.name)
		}
	}
	shared, err := templates.ReadFile("etc/authtoken.tmpl")
	if err != nil {
		return err
	}
	for src, dst := range configFiles {
		body, err := templates.ReadFile("etc/" + src)
		if err != nil {
			return err
		}
		t, err := template.New(src).Option("missingkey=error").Parse(string(shared) + string(body))
		if err != nil {
			return fmt.Errorf("realcloud: %s: %w", src, err)
		}
		var b strings.Builder
		if err := t.ExecuteTemplate(&b, src, v); err != nil {
			return fmt.Errorf("realcloud: %s: %w", src, err)
		}
		path := filepath.Join(etc, dst)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// AuthURL is Keystone's URL.
func AuthURL(p Ports) string { return fmt.Sprintf("http://%s:%d/v3", Host, p.Keystone) }
