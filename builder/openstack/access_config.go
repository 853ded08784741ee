//go:generate packer-sdc struct-markdown

package openstack

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/config/clouds"
)

// AccessConfig says how to reach and authenticate to the cloud. Nothing here
// talks to the network: credentials are checked in the first build step, so
// `packer validate` works without a cloud. Each setting comes from the
// template, else the `clouds.yaml` entry named by `cloud`, else the
// environment (`OS_*`), as the official builder and openstacksdk take them.
type AccessConfig struct {
	// The username to connect to OpenStack with. Defaults to `SDK_USERNAME`,
	// then `OS_USERNAME`.
	Username string `mapstructure:"username"`
	// The user ID to connect to OpenStack with. Defaults to `OS_USER_ID`,
	// then `OS_USERID`.
	UserID string `mapstructure:"user_id"`
	// The password of the user. Defaults to `SDK_PASSWORD`, then
	// `OS_PASSWORD`.
	Password string `mapstructure:"password"`
	// The URL of the Keystone endpoint. Defaults to `SDK_PROVIDER` (when a
	// URL), then `OS_AUTH_URL`. Required unless `cloud` is set.
	IdentityEndpoint string `mapstructure:"identity_endpoint"`
	// The project (tenant) ID to build in. Defaults to `OS_PROJECT_ID`, then
	// `OS_TENANT_ID`.
	TenantID string `mapstructure:"tenant_id"`
	// The project (tenant) name to build in. Defaults to `SDK_PROJECT`,
	// `SDK_TENANT_NAME`, `OS_PROJECT_NAME`, then `OS_TENANT_NAME`.
	TenantName string `mapstructure:"tenant_name"`
	// The domain ID of the user, and of the project unless a project named
	// outside the template has its own domain. Without it, the user's domain
	// is the entry's `user_domain_id`/`_name`, else `OS_USER_DOMAIN_ID`/`_NAME`,
	// and the project's `project_domain_id`/`_name`, else
	// `OS_PROJECT_DOMAIN_ID`/`_NAME`: they may differ, as in Horizon's
	// openrc. Both fall back to `OS_DOMAIN_ID`/`_NAME`, `OS_DEFAULT_DOMAIN`,
	// then `default`.
	DomainID string `mapstructure:"domain_id"`
	// The domain name of the user (and project), as `domain_id`.
	DomainName string `mapstructure:"domain_name"`
	// Skip TLS certificate verification of the OpenStack APIs. Only for
	// testing.
	Insecure bool `mapstructure:"insecure"`
	// The region to build in. Defaults to `SDK_REGION`, then
	// `OS_REGION_NAME`, or the cloud's `region_name`.
	Region string `mapstructure:"region"`
	// The endpoint interface to use: `public` (the default), `internal` or
	// `admin` (the `...URL` spellings are accepted too). Defaults to
	// `OS_INTERFACE`, then `OS_ENDPOINT_TYPE`, or the cloud's `interface`.
	EndpointType string `mapstructure:"endpoint_type"`
	// PEM file of CA certificates trusted for the APIs. Defaults to
	// `OS_CACERT`, or the cloud's `cacert`.
	CACertFile string `mapstructure:"cacert"`
	// Client certificate (PEM) for mutual TLS. Defaults to `OS_CERT`.
	ClientCertFile string `mapstructure:"cert"`
	// Client private key (PEM) for mutual TLS. Defaults to `OS_KEY`.
	ClientKeyFile string `mapstructure:"key"`
	// An existing Keystone token to authenticate with instead of a password.
	// Defaults to `OS_TOKEN`, then `OS_AUTH_TOKEN`. A token cannot be
	// renewed, so it must outlive the build. A token is used before an
	// application credential, which is used before a password.
	Token string `mapstructure:"token"`
	// The application credential name (needs `username` or `user_id`).
	// Defaults to `OS_APPLICATION_CREDENTIAL_NAME`.
	ApplicationCredentialName string `mapstructure:"application_credential_name"`
	// The application credential ID. Defaults to
	// `OS_APPLICATION_CREDENTIAL_ID`.
	ApplicationCredentialID string `mapstructure:"application_credential_id"`
	// The application credential secret. Defaults to
	// `OS_APPLICATION_CREDENTIAL_SECRET`.
	ApplicationCredentialSecret string `mapstructure:"application_credential_secret"`
	// An entry of `clouds.yaml` to take the settings from. Defaults to
	// `OS_CLOUD`. The file is looked for in `OS_CLIENT_CONFIG_FILE`, the
	// current directory, `~/.config/openstack` and `/etc/openstack`, with
	// `secure.yaml` next to it; its `interface`, `verify`, `cacert` and
	// `region_name` are honoured. Options set in the template override it,
	// and what it leaves blank (typically the password, injected by CI as
	// `OS_PASSWORD`) is taken from the environment.
	Cloud string `mapstructure:"cloud"`

	// Resolved by Prepare.
	authOpts     gophercloud.AuthOptions
	endpointOpts gophercloud.EndpointOpts
	tlsConfig    *tls.Config
}

// validEndpointTypes are the interface names Keystone catalogs use, in
// both the v3 and the legacy `...URL` spelling.
var validEndpointTypes = map[string]gophercloud.Availability{
	"":            gophercloud.AvailabilityPublic,
	"public":      gophercloud.AvailabilityPublic,
	"publicURL":   gophercloud.AvailabilityPublic,
	"internal":    gophercloud.AvailabilityInternal,
	"internalURL": gophercloud.AvailabilityInternal,
	"admin":       gophercloud.AvailabilityAdmin,
	"adminURL":    gophercloud.AvailabilityAdmin,
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

func setDefault(field *string, envs ...string) {
	if *field == "" {
		*field = firstEnv(envs...)
	}
}

// Prepare fills unset options from the environment or clouds.yaml and
// checks them. It reads local files only.
func (c *AccessConfig) Prepare() []error {
	var errs []error
	c.legacyEnv()
	setDefault(&c.Cloud, "OS_CLOUD")
	setDefault(&c.EndpointType, "OS_INTERFACE", "OS_ENDPOINT_TYPE")
	if _, ok := validEndpointTypes[c.EndpointType]; !ok {
		errs = append(errs, fmt.Errorf("endpoint_type: %q is not one of public, internal, admin (or publicURL, internalURL, adminURL)", c.EndpointType))
	}
	var file credentials
	if c.Cloud != "" {
		var err error
		if file, err = c.prepareCloud(); err != nil {
			return append(errs, err)
		}
	} else {
		setDefault(&c.Region, "OS_REGION_NAME")
		setDefault(&c.CACertFile, "OS_CACERT")
		setDefault(&c.ClientCertFile, "OS_CERT")
		setDefault(&c.ClientKeyFile, "OS_KEY")
		tlsConf, err := buildTLS(c.Insecure, c.CACertFile, c.ClientCertFile, c.ClientKeyFile)
		if err != nil {
			errs = append(errs, err)
		}
		c.tlsConfig = tlsConf
		c.endpointOpts = gophercloud.EndpointOpts{Region: c.Region, Availability: validEndpointTypes[c.EndpointType]}
	}
	cr := mergeCredentials(c.templateCredentials(), file, envCredentials())
	errs = append(errs, cr.check(c.Cloud)...)
	if len(errs) > 0 {
		return errs
	}
	c.authOpts = cr.authOptions()
	return nil
}

// legacyEnv reads the SDK_* variables of the official builder's first
// releases, which it still honours ahead of OS_* and clouds.yaml:
// SDK_USERNAME, SDK_PASSWORD, SDK_REGION, SDK_PROJECT (or SDK_TENANT_NAME)
// and SDK_PROVIDER, the Keystone URL (other values named a provider and
// are ignored).
func (c *AccessConfig) legacyEnv() {
	setDefault(&c.Username, "SDK_USERNAME")
	setDefault(&c.Password, "SDK_PASSWORD")
	setDefault(&c.Region, "SDK_REGION")
	setDefault(&c.TenantName, "SDK_PROJECT", "SDK_TENANT_NAME")
	if p := os.Getenv("SDK_PROVIDER"); c.IdentityEndpoint == "" && (strings.HasPrefix(p, "https://") || strings.HasPrefix(p, "http://")) {
		c.IdentityEndpoint = p
	}
}

// prepareCloud reads a clouds.yaml entry (and its secure.yaml) with
// gophercloud's own parser. Template options win over the file for the
// endpoint and TLS; the credentials it returns are merged by Prepare.
func (c *AccessConfig) prepareCloud() (credentials, error) {
	opts := []clouds.ParseOption{clouds.WithCloudName(c.Cloud)}
	add := func(v string, f func(string) clouds.ParseOption) {
		if v != "" {
			opts = append(opts, f(v))
		}
	}
	add(c.Region, clouds.WithRegion)
	add(c.EndpointType, clouds.WithEndpointType)
	add(c.CACertFile, clouds.WithCACertPath)
	add(c.ClientCertFile, clouds.WithClientCertPath)
	add(c.ClientKeyFile, clouds.WithClientKeyPath)
	if c.Insecure {
		opts = append(opts, clouds.WithInsecure(true))
	}
	ao, eo, tlsConf, err := clouds.Parse(opts...)
	if err != nil {
		return credentials{}, fmt.Errorf("cloud: %q: %w", c.Cloud, err)
	}
	c.endpointOpts, c.tlsConfig = eo, tlsConf
	// Record what was resolved so the artifact and UI can name the region.
	c.Region = eo.Region
	file := credentials{
		authURL: ao.IdentityEndpoint, password: ao.Password, token: ao.TokenID,
		user: idName{ao.UserID, ao.Username}, userDomain: idName{ao.DomainID, ao.DomainName},
		appCredID: ao.ApplicationCredentialID, appCredName: ao.ApplicationCredentialName, appCredKey: ao.ApplicationCredentialSecret,
	}
	// gophercloud puts the entry's project (and its domain: project_domain_*,
	// else domain_*) into the scope.
	if s := ao.Scope; s != nil {
		file.project = idName{s.ProjectID, s.ProjectName}
		if s.ProjectName != "" {
			file.projectDomain = idName{s.DomainID, s.DomainName}
		}
		if s.System || s.TrustID != "" {
			file.scope = s
		}
	}
	return file, nil
}

// buildTLS makes the TLS settings for the API clients from local files.
func buildTLS(insecure bool, caFile, certFile, keyFile string) (*tls.Config, error) {
	conf := &tls.Config{InsecureSkipVerify: insecure} //nolint:gosec // opt-in, documented as testing only
	var errs []error
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			errs = append(errs, fmt.Errorf("cacert: %w", err))
		} else {
			pool, _ := x509.SystemCertPool()
			if pool == nil {
				pool = x509.NewCertPool()
			}
			if !pool.AppendCertsFromPEM(pem) {
				errs = append(errs, fmt.Errorf("cacert: %s holds no PEM certificate", caFile))
			}
			conf.RootCAs = pool
		}
	}
	switch {
	case certFile != "" && keyFile != "":
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			errs = append(errs, fmt.Errorf("cert/key: %w", err))
		} else {
			conf.Certificates = []tls.Certificate{pair}
		}
	case certFile != "":
		errs = append(errs, errors.New("key: required with cert"))
	case keyFile != "":
		errs = append(errs, errors.New("cert: required with key"))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return conf, nil
}

// endpointName is the human name of the interface in use, for messages.
func (c *AccessConfig) endpointName() string {
	return strings.TrimSuffix(string(c.endpointOpts.Availability), "URL")
}

// secrets are the credentials given or resolved (from the environment or
// clouds.yaml): what must never be printed.
func (c *AccessConfig) secrets() []string {
	var out []string
	for _, s := range []string{c.Password, c.Token, c.ApplicationCredentialSecret, c.authOpts.Password, c.authOpts.TokenID, c.authOpts.ApplicationCredentialSecret} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
