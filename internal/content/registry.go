//go:generate packer-sdc mapstructure-to-hcl2 -type Registry
//go:generate packer-sdc struct-markdown

package content

// Registry is how to reach one container registry: TLS and credentials
// (the provisioner's container_registries, which the containers kind
// reads in Env.Registries).
type Registry struct {
	// Registry as image references name it, host or host:port, e.g.
	// docker.io or registry.example.org:5000.
	Host string `mapstructure:"host" required:"true"`
	// Talk to the registry over plain HTTP or unverified TLS (podman's
	// --tls-verify=false, registries.conf's insecure = true), for a
	// site's internal mirror without a trusted certificate. Only for the
	// build's pulls: nothing is written to the image's registries.conf.
	Insecure bool `mapstructure:"insecure"`
	// Username for the registry; with password. Without them, the
	// plugin's own fetches (content_source = "host") use what the build
	// host's docker or podman configuration holds for the registry
	// (config.json and its credential helpers, or auth.json); the VM's
	// pulls use only these.
	Username string `mapstructure:"username"`
	// Password or token for the registry. Sensitive: it reaches the VM
	// only in a private, temporary auth file removed after the pull, and
	// never appears in logs, output, image.json or the image.
	Password string `mapstructure:"password"`
}

// RegistryOf is the configuration of host in rs, with only its host
// when none.
func RegistryOf(rs []Registry, host string) Registry {
	for _, r := range rs {
		if r.Host == host {
			return r
		}
	}
	return Registry{Host: host}
}
