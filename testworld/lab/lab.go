// Package lab is the local, offline test world: an OpenStack cloud double
// whose servers are Rocky-like VMs (namespaces, overlay disks, real sshd),
// a Pulp content-app double serving real signed RPM repositories, and a
// release server with monitoring binaries. Tests start one in TestMain;
// `make lab-up` runs one as a background process for people and the demo.
package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/internal/gpgkeys"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/cloud"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/gitserver"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labhttp"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/pypi"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/registry"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/releases"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/repos"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/vm"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/pulpfake"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/sitepulp"
)

// Names and credentials a lab always has.
const (
	BaseImageName = "Rocky-9-GenericCloud-Base-9.6"
	// BaseImage8Name is the Rocky 8.10 base image (BaseImages).
	BaseImage8Name = "Rocky-8-GenericCloud-Base-8.10"
	SSHUser        = "rocky"
	CloudName      = "lab"
	ArkUser        = "lab-ark"
	SitePulpUser   = "lab-site-admin"
	RegistryUser   = "lab-pull"
	// AdminCloudName is the clouds.yaml entry of the lab's admin, for the
	// few tests that need what only an admin may do; builds use CloudName,
	// a project member, as on a real site.
	AdminCloudName = "lab-admin"
	// ShareProject is a second project the lab user is a member of (an
	// image_members target the build can accept for).
	ShareProject = "lab-share"
)

// RealisticArkLink is the realistic profile's network between the VMs and
// the Pulp double, a site's Ark across the internet: 20 ms each way (a
// 40 ms round trip) and 50 MB/s (400 Mbit/s) per VM. The lab's host
// (the data source, host-side fetches) is not behind it.
var RealisticArkLink = pulpfake.Link{Delay: 20 * time.Millisecond, Rate: 50_000_000}

// profileArkLink is the link the lab's Ark double plays: set, else the
// profile's (none in the fast profile).
func profileArkLink(set pulpfake.Link, profile string) pulpfake.Link {
	if set == (pulpfake.Link{}) && profile == cloud.ProfileRealistic {
		return RealisticArkLink
	}
	return set
}

// Options configures a lab.
type Options struct {
	// Dir holds all state: disks, the env file, clouds.yaml. Required.
	Dir string
	// CacheDir holds the built repositories, release tarballs and the VM
	// userland, reused across starts and shared by every lab on the
	// machine (builds are locked); default DefaultCacheDir().
	CacheDir string
	// Network is the lab's L2 network; zero values get a free random one
	// (tests), `make lab-up` passes fixed names.
	Network vm.NetworkOptions
	// Secrets are generated when empty. Generated secrets (Keystone's and
	// Ark's) hold the characters that break naive quoting and URL building
	// (% # : @ quotes, a space, non-ASCII), so every build proves they pass
	// through.
	CloudPassword, ArkPassword, AppCredentialSecret, AdminPassword, SitePulpPassword string
	// RegistryPassword is the authenticated registry's (RegistryUser).
	RegistryPassword string
	// Timing of cloud state transitions; zero takes the profile named by
	// $LAB_PROFILE (fast, the default, or realistic).
	Timing cloud.Timing
	// ArkLink is the network between the VMs and the Pulp double; zero
	// takes the profile's ($LAB_PROFILE: none when fast, RealisticArkLink
	// when realistic).
	ArkLink pulpfake.Link
	// TokenTTL of Keystone tokens; zero keeps the default.
	TokenTTL time.Duration
	// Faults are injected into the cloud from the start; change them later
	// with Cloud.SetFaults or PUT $LAB_CONTROL_URL/faults.
	Faults []cloud.Fault
	Logf   func(format string, args ...any)
}

// Lab is a running lab.
type Lab struct {
	Options
	Cloud    *cloud.Cloud
	VMs      *vm.Manager
	Pulp     *pulpfake.Server
	SitePulp *sitepulp.Server // a site's own Pulp (API and content), empty at start
	Releases *releases.Server
	Repos    *repos.Result
	// CA signs the certificates of the lab's HTTPS servers (HTTPSUpstreams)
	CA *labhttp.CA

	BaseImageID   string
	BaseImageDisk string // the hypervisor disk behind the base image, for cloning more images
	// Env is what .lab/env exports: OS_CLOUD, OS_CLIENT_CONFIG_FILE,
	// ARK_CONTENT_URL, ARK_USERNAME, ARK_PASSWORD, LAB_RELEASES_URL,
	// LAB_SSH_USER, LAB_GIT_URL, LAB_PYPI_URL, LAB_GRAFANA_PLUGINS_URL, LAB_GRAFANA_URL, LAB_NETLIB_URL, LAB_REGISTRY(_AUTH,
	// _USERNAME, _PASSWORD), LAB_CA_CERT and LAB_UPSTREAMS_ADDR
	// (HTTPSUpstreams), plus LAB_CONTROL_URL for lab-status and faults.
	Env map[string]string

	Git  *gitserver.Server
	PyPI *pypi.Server
	// Registry serves the lab's container images anonymously;
	// RegistryAuth serves the same storage only to RegistryUser.
	Registry, RegistryAuth *registry.Server

	fwMu    sync.Mutex
	blocked map[string]bool // servers whose host REJECT rule (SetServerReachableFromVMs) is in place
}

// Start builds (or reuses from cache) the repositories and the base image
// and starts every service. On error everything started is stopped.
func Start(ctx context.Context, o Options) (l *Lab, err error) {
	if o.Dir == "" {
		return nil, errors.New("lab: Options.Dir is required")
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, err
	}
	if o.CacheDir == "" {
		o.CacheDir = DefaultCacheDir()
	}
	if o.Network.Bridge == "" {
		o.Network = RandomNetwork()
	}
	for _, s := range []*string{&o.CloudPassword, &o.AppCredentialSecret, &o.AdminPassword, &o.ArkPassword, &o.SitePulpPassword, &o.RegistryPassword} {
		if *s == "" {
			*s = awkwardSecret()
		}
	}
	if o.Timing == (cloud.Timing{}) {
		// LAB_PROFILE=realistic makes the cloud take real clouds' times.
		if o.Timing, err = cloud.ProfileTiming(os.Getenv("LAB_PROFILE")); err != nil {
			return nil, fmt.Errorf("lab: %w", err)
		}
	}
	o.ArkLink = profileArkLink(o.ArkLink, os.Getenv("LAB_PROFILE"))
	l = &Lab{Options: o}
	defer func() {
		if err != nil {
			l.Close()
			l = nil
		}
	}()

	started := time.Now()
	if l.Repos, err = repos.Build(repos.Options{CacheDir: filepath.Join(o.CacheDir, "repos"), Logf: o.Logf}); err != nil {
		return l, fmt.Errorf("lab: building repositories: %w", err)
	}
	o.Logf("lab: repositories ready in %s", time.Since(started).Round(time.Millisecond))

	rootfs, err := vm.BuildRootFS(filepath.Join(o.CacheDir, "rootfs"), o.Logf)
	if err != nil {
		return l, fmt.Errorf("lab: building the VM userland: %w", err)
	}
	o.Logf("lab: VM userland %s ready", rootfs)
	if l.VMs, err = vm.NewManager(vm.ManagerOptions{
		StateDir: filepath.Join(o.Dir, "vms"),
		RootFS:   rootfs,
		Network:  o.Network,
		Metadata: l.metadata,
		Logf:     o.Logf,
	}); err != nil {
		return l, fmt.Errorf("lab: starting the VM manager: %w", err)
	}
	gateway := o.Network.Gateway

	l.Pulp = pulpfake.New(pulpfake.Options{Addr: net.JoinHostPort(gateway, "0"), Link: o.ArkLink})
	guard := &pulpfake.Guard{Users: map[string]string{ArkUser: o.ArkPassword}}
	for _, d := range repos.Distributions(l.Repos, guard) {
		l.Pulp.AddDistribution(d)
	}
	if err = l.Pulp.Start(); err != nil {
		return l, fmt.Errorf("lab: starting the Pulp double: %w", err)
	}
	for _, s := range l.Repos.Snapshots {
		if repos.Public(s.Repo) && s.Timestamp == repos.NewerTimestamp {
			l.Pulp.AddDistribution(pulpfake.Distribution{BasePath: repos.VendorRepoFilePath(vendorRepoFileDir, s),
				Files: map[string][]byte{s.RepoFile + ".repo": repos.VendorRepoFile(s, l.Pulp.ContentURL())}})
		}
	}
	if l.SitePulp, err = startSitePulp(o, gateway); err != nil {
		return l, err
	}
	urlRPMs, err := repos.BuildURLRPMs(repos.Options{CacheDir: filepath.Join(o.CacheDir, "repos"), Logf: o.Logf})
	if err != nil {
		return l, fmt.Errorf("lab: building the RPMs served by URL: %w", err)
	}
	// OSC's ondemand key at yum.osc.edu's path (an HTTPSUpstream): the lab's key signs its ondemand packages
	urlRPMs[ondemandKeyPath] = l.Repos.GPGKeyFiles["RPM-GPG-KEY-ondemand"]
	// Ceph's own release key at download.ceph.com's path, public as
	// download.ceph.com serves it: the manila role only imports it (no
	// lab package is checked against it: the appliance empties the role's
	// repository list, and ceph-common comes from dnf_repos' ceph
	// repository), so a mirror serves what the real host does
	ceph, err := gpgkeys.ByName("ceph-release", "9")
	if err != nil {
		return l, fmt.Errorf("lab: Ceph's release key: %w", err)
	}
	urlRPMs[cephKeyPath] = ceph.Armored()
	if l.Releases, err = releases.Start(releases.Options{Addr: net.JoinHostPort(gateway, "0"), CacheDir: filepath.Join(o.CacheDir, "releases"), Files: urlRPMs, Logf: o.Logf}); err != nil {
		return l, fmt.Errorf("lab: starting the release server: %w", err)
	}
	if err = l.serveUpstreams(gateway); err != nil {
		return l, err
	}
	if l.Git, err = gitserver.Start(gitserver.Options{Addr: net.JoinHostPort(gateway, "0"), Dir: filepath.Join(o.CacheDir, "git"), Logf: o.Logf}); err != nil {
		return l, fmt.Errorf("lab: starting the git server: %w", err)
	}
	if l.PyPI, err = pypi.Start(pypi.Options{Addr: net.JoinHostPort(gateway, "0"), Logf: o.Logf}); err != nil {
		return l, fmt.Errorf("lab: starting the package index: %w", err)
	}
	// the open registry pushes the images; the authenticated one shares
	// its storage
	regDir := filepath.Join(o.CacheDir, "registry")
	if l.Registry, err = registry.Start(registry.Options{Host: gateway, Dir: regDir, Logf: o.Logf}); err != nil {
		return l, fmt.Errorf("lab: starting the registry: %w", err)
	}
	if l.RegistryAuth, err = registry.Start(registry.Options{Host: gateway, Dir: regDir, Username: RegistryUser, Password: o.RegistryPassword, Logf: o.Logf}); err != nil {
		return l, fmt.Errorf("lab: starting the authenticated registry: %w", err)
	}

	if l.Cloud, err = cloud.New(cloud.Options{
		Hypervisor: hypervisor{l.VMs},
		Users: []cloud.User{{Name: "lab", Password: o.CloudPassword, Project: "lab", Domain: "Default",
			OtherProjects:  []string{ShareProject},
			AppCredentials: []cloud.AppCredential{{ID: "lab-app-cred", Name: "lab-app-cred", Secret: o.AppCredentialSecret}}},
			{Name: "lab-admin", Password: o.AdminPassword, Project: "admin", Domain: "Default", Roles: []string{"admin"}}},
		TokenTTL:        o.TokenTTL,
		Timing:          o.Timing,
		FixedCIDR:       o.Network.CIDR,
		FixedGateway:    gateway,
		FloatingCIDR:    o.Network.FloatingCIDR,
		FloatingGateway: firstHost(o.Network.FloatingCIDR),
		Logf:            o.Logf,
		Control: map[string]http.Handler{
			"releases":      http.HandlerFunc(l.serveControl),
			"ark":           http.HandlerFunc(l.serveControl),
			"git":           http.HandlerFunc(l.serveControl),
			"pypi":          http.HandlerFunc(l.serveControl),
			"registry":      http.HandlerFunc(l.serveControl),
			"registry-auth": http.HandlerFunc(l.serveControl),
			"servers":       http.HandlerFunc(l.serveControl),
		},
	}); err != nil {
		return l, fmt.Errorf("lab: creating the cloud: %w", err)
	}
	if err = l.Cloud.Start(); err != nil {
		return l, fmt.Errorf("lab: starting the cloud: %w", err)
	}
	for _, f := range Flavors {
		l.Cloud.AddFlavor(f)
	}
	// the VMs' ports enforce their security groups, and the default group
	// lets in only its members: SSH from anywhere in it, as sites open it,
	// so builds in the default group reach their VMs
	for _, p := range []string{"lab", ShareProject} {
		if err = l.Cloud.AllowInDefaultGroup(p, "tcp", 22, 22, "0.0.0.0/0"); err != nil {
			return l, err
		}
	}
	l.Cloud.SetFaults(o.Faults...)
	if err = l.addBaseImages(); err != nil {
		return l, err
	}
	if err = l.writeEnv(); err != nil {
		return l, err
	}
	o.Logf("lab: ready in %s", time.Since(started).Round(time.Millisecond))
	return l, nil
}

// Flavors are the lab's flavors, named like a typical site's.
var Flavors = []cloud.Flavor{
	{ID: "1", Name: "m1.small", VCPUs: 1, RAM: 2048, Disk: 20},
	{ID: "2", Name: "m1.medium", VCPUs: 2, RAM: 4096, Disk: 40},
	{ID: "3", Name: "general.v1.small", VCPUs: 2, RAM: 4096, Disk: 20},
}

// BaseImages are the lab's GenericCloud-like base images by Rocky major:
// BaseImageName (RL9) and BaseImage8Name.
var BaseImages = map[string]struct{ Name, Version string }{
	"9": {BaseImageName, "9.6"},
	"8": {BaseImage8Name, "8.10"},
}

// addBaseImages builds the GenericCloud-like images from the
// repositories' base packages of each major and registers them in
// Glance: RL9's is BaseImageID, BaseImageDisk.
func (l *Lab) addBaseImages() error {
	for _, major := range repos.Majors {
		id, disk, err := l.addBaseImage(major)
		if err != nil {
			return err
		}
		if major == "9" {
			l.BaseImageID, l.BaseImageDisk = id, disk
		}
	}
	return nil
}

func (l *Lab) addBaseImage(major string) (id, disk string, err error) {
	img := BaseImages[major]
	key := l.Repos.GPGKeyFiles["RPM-GPG-KEY-Rocky-"+major]
	keys := map[string][]byte{"RPM-GPG-KEY-Rocky-" + major: key}
	if major == "8" {
		keys["RPM-GPG-KEY-rockyofficial"] = key // what Rocky 8's repo files name
	}
	disk, err = vm.BuildBaseImage(l.VMs, vm.BaseImageOptions{RockyVersion: img.Version, Codename: repos.RockyCodename(img.Version), RPMs: l.Repos.BaseImageRPMs[major], GPGKeys: keys})
	if err != nil {
		return "", "", fmt.Errorf("lab: building %s: %w", img.Name, err)
	}
	id, err = l.Cloud.AddImage(cloud.ImageSeed{
		Name:       img.Name,
		Disk:       disk,
		Visibility: "public",
		MinDisk:    10,
		Properties: map[string]string{
			"os_distro": "rocky", "os_version": img.Version, "hw_disk_bus": "scsi", "signature_verified": "False",
		},
	})
	if err != nil {
		return "", "", fmt.Errorf("lab: registering %s: %w", img.Name, err)
	}
	return id, disk, nil
}

func (l *Lab) metadata(fixedIP string) *vm.Metadata {
	if l.Cloud == nil {
		return nil
	}
	return VMMetadata(l.Cloud.MetadataFor(fixedIP))
}

// VMMetadata is what the VMs' metadata service serves for the cloud's
// server (nil for none).
func VMMetadata(md *cloud.Metadata) *vm.Metadata {
	if md == nil {
		return nil
	}
	return &vm.Metadata{UUID: md.UUID, Name: md.Name, Hostname: md.Hostname, Meta: md.Meta, PublicKeys: md.PublicKeys, UserData: md.UserData,
		ProjectID: md.ProjectID, ConfigDrive: md.ConfigDrive}
}

// writeEnv writes clouds.yaml and the env file, both readable only by the
// owner since they hold the lab's passwords.
func (l *Lab) writeEnv() error {
	entry := func(user, password, project string) map[string]any {
		return map[string]any{
			"auth": map[string]any{
				"auth_url": l.Cloud.AuthURL(), "username": user, "password": password,
				"project_name": project, "user_domain_name": "Default", "project_domain_name": "Default",
			},
			"region_name": "RegionOne", "interface": "public", "identity_api_version": 3,
		}
	}
	clouds := map[string]any{"clouds": map[string]any{
		CloudName:      entry("lab", l.CloudPassword, "lab"),
		AdminCloudName: entry("lab-admin", l.AdminPassword, "admin"),
	}}
	data, err := json.MarshalIndent(clouds, "", "  ") // JSON is YAML
	if err != nil {
		return err
	}
	cloudsFile := filepath.Join(l.Dir, "clouds.yaml")
	if err := writeFileAtomic(cloudsFile, data); err != nil {
		return err
	}
	l.Env = map[string]string{
		"OS_CLOUD":               CloudName,
		"OS_CLIENT_CONFIG_FILE":  cloudsFile,
		"ARK_CONTENT_URL":        l.Pulp.ContentURL(),
		"ARK_USERNAME":           ArkUser,
		"ARK_PASSWORD":           l.ArkPassword,
		"LAB_RELEASES_URL":       l.Releases.URL() + "/prometheus", // <base>/<name>/releases/download/v<ver>/...
		"LAB_SSH_USER":           SSHUser,
		"LAB_GIT_URL":            l.Git.URL(),       // <url>/<owner>/<name>.git
		"LAB_PYPI_URL":           l.PyPI.IndexURL(), // pip --index-url
		"LAB_REGISTRY":           l.Registry.Host(), // host:port, plain HTTP
		"LAB_REGISTRY_AUTH":      l.RegistryAuth.Host(),
		"LAB_REGISTRY_USERNAME":  RegistryUser,
		"LAB_REGISTRY_PASSWORD":  l.RegistryPassword,
		"LAB_CONTROL_URL":        l.Cloud.URL() + "/_control",
		"LAB_PULP_CONTROL_URL":   l.Pulp.URL() + "/_control",
		"LAB_SITE_PULP_URL":      l.SitePulp.URL(),
		"LAB_SITE_PULP_USERNAME": SitePulpUser,
		"LAB_SITE_PULP_PASSWORD": l.SitePulpPassword,
		"LAB_BASE_IMAGE":         BaseImageName,
		"LAB_BASE_IMAGE_RL8":     BaseImage8Name,
		"LAB_NETWORK":            "lab-net",
		"LAB_FLOATING_NETWORK":   "public",
		"LAB_ADMIN_CLOUD":        AdminCloudName,
		"LAB_SHARE_PROJECT_ID":   l.Cloud.ProjectID(ShareProject),
	}
	// grafana_plugin_url: the release server's grafana.com-like plugin API
	l.Env["LAB_GRAFANA_PLUGINS_URL"] = l.Releases.URL() + releases.GrafanaPluginBase
	// grafana.com's shape for dashboards, netlib's for the HPL source
	l.Env["LAB_GRAFANA_URL"] = l.Releases.URL()
	l.Env["LAB_NETLIB_URL"] = l.Releases.URL() + strings.TrimSuffix(releases.HPLPath, "/hpl-2.3.tar.gz")
	// the address HTTPSUpstreams and HTTPUpstreams resolve to for VMs, and
	// the CA they trust
	l.Env["LAB_UPSTREAMS_ADDR"] = l.Network.Gateway
	l.Env["LAB_CA_CERT"] = filepath.Join(l.Dir, caFile)
	return writeFileAtomic(filepath.Join(l.Dir, "env"), []byte(FormatEnv(l.Env)))
}

// Close stops everything the lab started: servers first (so VMs die
// before their network), then the services and the VM manager.
func (l *Lab) Close() error {
	var errs []error
	if l.VMs != nil {
		errs = append(errs, l.SetAllServersReachableFromVMs(true))
	}
	if l.Cloud != nil {
		errs = append(errs, l.Cloud.Close())
	}
	if l.VMs != nil {
		errs = append(errs, l.VMs.Close())
	}
	if l.Pulp != nil {
		errs = append(errs, l.Pulp.Close())
	}
	if l.SitePulp != nil {
		errs = append(errs, l.SitePulp.Close())
	}
	if l.Releases != nil {
		errs = append(errs, l.Releases.Close())
	}
	if l.Git != nil {
		errs = append(errs, l.Git.Close())
	}
	if l.PyPI != nil {
		errs = append(errs, l.PyPI.Close())
	}
	for _, r := range []*registry.Server{l.Registry, l.RegistryAuth} {
		if r != nil {
			errs = append(errs, r.Close())
		}
	}
	if l.Dir != "" {
		os.Remove(filepath.Join(l.Dir, "env"))
	}
	return errors.Join(errs...)
}

// Environ is Env as "K=V" entries, for exec.Cmd.Env.
func (l *Lab) Environ() []string {
	env := make([]string, 0, len(l.Env))
	for k, v := range l.Env {
		env = append(env, k+"="+v)
	}
	return env
}

// Status lists the cloud's live resources.
func (l *Lab) Status() cloud.Status { return l.Cloud.Status() }

// FormatEnv renders export lines, sorted, with single-quoted values.
func FormatEnv(env map[string]string) string {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sortStrings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "export %s='%s'\n", k, strings.ReplaceAll(env[k], "'", `'\''`))
	}
	return b.String()
}

// SetReleasesReachableFromVMs is SetServerReachableFromVMs("releases", ok)
// (servers.go).
func (l *Lab) SetReleasesReachableFromVMs(ok bool) error {
	return l.SetServerReachableFromVMs("releases", ok)
}

// ReleasesReachableFromVMs reports the state SetReleasesReachableFromVMs set.
func (l *Lab) ReleasesReachableFromVMs() bool { return l.ServerReachableFromVMs("releases") }

// SnapshotRepos are the lab's snapshots taken at timestamp in the shape
// of the fatimage-ark data source's `repos` output, ready for the fatimage
// provisioner's `repos`; the vendor repositories (VendorRepo) are not
// among them, as the data source does not give them.
func (l *Lab) SnapshotRepos(timestamp string) []any { return l.SnapshotReposFor("9", timestamp) }

// SnapshotReposFor is SnapshotRepos for Rocky major's repositories.
func (l *Lab) SnapshotReposFor(major, timestamp string) []any {
	var out []any
	for _, s := range l.Repos.Snapshots {
		if s.Timestamp != timestamp || s.Vendor || s.Major != major {
			continue
		}
		out = append(out, map[string]any{
			"name": s.Repo, "repo_file": s.RepoFile, "repo_name": s.RepoName,
			"baseurl": strings.TrimRight(l.Env["ARK_CONTENT_URL"], "/") + "/" + s.BasePath(),
			"path":    s.PulpPath, "timestamp": s.Timestamp, "gpgcheck": true,
		})
	}
	return out
}

// vendorRepoFileDir is where the Pulp double serves the public vendor
// repositories' .repo files (VendorRepoFileURL).
const vendorRepoFileDir = "vendor-repo-files"

// VendorRepoFileURL is VendorRepoFileURLFor RL9.
func (l *Lab) VendorRepoFileURL(key string) string { return l.VendorRepoFileURLFor("9", key) }

// VendorRepoFileURLFor is the URL of a .repo file for Rocky major's
// public vendor repository key's newer snapshot (cuda: what a site's
// cuda_repo_url names), "" for a key the lab serves none for.
func (l *Lab) VendorRepoFileURLFor(major, key string) string {
	s, ok := l.Repos.SnapshotFor(major, key, repos.NewerTimestamp)
	if !ok || !repos.Public(key) {
		return ""
	}
	return strings.TrimRight(l.Env["ARK_CONTENT_URL"], "/") + "/" + repos.VendorRepoFilePath(vendorRepoFileDir, s) + "/" + s.RepoFile + ".repo"
}

// VendorRepo is the newer snapshot of the vendor repository key (doca,
// cuda) as a template's repos entry gives it (its own repo file and
// section); ok is false for a key the lab does not serve.
func (l *Lab) VendorRepo(key string) (entry map[string]string, ok bool) {
	s, ok := l.Repos.Snapshot(key, repos.NewerTimestamp)
	if !ok || !s.Vendor {
		return nil, false
	}
	return map[string]string{
		"name": s.Repo, "repo_file": s.RepoFile, "repo_name": s.RepoName,
		"baseurl": strings.TrimRight(l.Env["ARK_CONTENT_URL"], "/") + "/" + s.BasePath() + "/",
	}, true
}

// BinaryChecksums are the sha256s of the release server's stand-in
// tarballs by binary name, to override the provisioner's built-in ones.
func (l *Lab) BinaryChecksums() map[string]string {
	sums := l.Releases.Checksums()
	out := map[string]string{}
	for _, b := range l.Releases.Binaries() {
		out[b.Name] = sums[b.Tarball()]
	}
	return out
}

// DefaultCacheDir is the user's cache directory's fatimage-lab: the test
// packages, `make lab-up` and `make demo` share what it holds (the VM
// userland alone takes minutes to build).
func DefaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "fatimage-lab")
}
