package e2e

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"text/template"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/cloud"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
)

// The behaviour suite: each template below is validated and built on the
// lab by the official openstack builder and by ours; what each build did
// on the cloud (the calls that changed something, and the image it left)
// is normalised and compared. Every difference must be one the table of
// differences in docs/builders/openstack.mdx explains (documented below,
// naming the row), and every documented difference must still occur.
// BEHAVIOUR_VERBOSE=1 logs each build's effects.

// behaviourCase is one source block body, run under both builders. Its
// {{.Field}}s come from behaviourVars.
type behaviourCase struct {
	name string
	body string
}

var behaviourCases = []behaviourCase{
	// The official docs' private-cloud example on the lab: the source image
	// by id, a network, a temporary keypair, ssh through a floating IP.
	{"docs-private-cloud", `
  source_image        = "{{.BaseImage}}"
  flavor              = "m1.small"
  networks            = ["{{.LabNet}}"]
  floating_ip_network = "public"
  ssh_username        = "rocky"
  ssh_timeout         = "3m"`},
	// The official docs' Block Storage example: a volume in a zone, of a
	// type, no communicator.
	{"docs-volume", `
  availability_zone       = "nova"
  source_image            = "{{.BaseImage}}"
  flavor                  = "m1.small"
  networks                = ["{{.LabNet}}"]
  use_blockstorage_volume = true
  volume_type             = "lvmdriver-1"
  communicator            = "none"`},
	// The appliance's template as a site runs it: volume boot, a given
	// keypair, security groups, metadata, user_data, raw disk format.
	{"appliance", `
  flavor                  = "m1.small"
  use_blockstorage_volume = true
  volume_type             = "lvmdriver-1"
  volume_size             = 20
  volume_name             = "{{.ImageName}}"
  metadata                = { appliance_site = "lab" }
  instance_metadata       = { ansible_init_disable = "true" }
  networks                = ["{{.LabNet}}"]
  floating_ip_network     = "public"
  security_groups         = ["default"]
  user_data               = "#cloud-config\nssh_authorized_keys:\n- {{.PublicKey}}\n"
  source_image_name       = "Rocky-9-GenericCloud-Base-9.6"
  ssh_username            = "rocky"
  ssh_timeout             = "3m"
  ssh_private_key_file    = "{{.KeyFile}}"
  ssh_keypair_name        = "{{.KeyPair}}"
  image_disk_format       = "raw"
  image_visibility        = "private"`},
	// A server snapshot with every image setting, config_drive, user_data
	// and user_data_file together (the file wins), and a shared image
	// accepted for its member.
	{"snapshot-image-settings", `
  source_image_name         = "Rocky-9-GenericCloud-Base-9.6"
  flavor                    = "m1.small"
  communicator              = "none"
  config_drive              = true
  user_data                 = "#cloud-config\n# from user_data\n"
  user_data_file            = "{{.UserDataFile}}"
  instance_name             = "{{.ImageName}}-vm"
  instance_metadata         = { role = "build" }
  metadata                  = { hw_scsi_model = "virtio-scsi", os_distro = "rocky" }
  image_tags                = ["b", "a"]
  image_min_disk            = 20
  image_visibility          = "shared"
  image_members             = ["{{.ShareProject}}"]
  image_auto_accept_members = true`},
	// Network discovery, the floating IP's network and port.
	{"network-discovery", `
  source_image_name       = "Rocky-9-GenericCloud-Base-9.6"
  flavor                  = "m1.small"
  network_discovery_cidrs = ["10.0.0.0/8"]
  floating_ip_network     = "public"
  instance_floating_ip_net = "{{.LabNet}}"
  communicator            = "none"`},
	// The accepted templates: a filter with most_recent and the
	// docs' "protected" visibility, members on a private image (Glance
	// refuses them late), auto-accept with no members.
	{"filter-members-private", `
  source_image_filter {
    filters {
      name       = "Rocky-9-GenericCloud-Base-9.6"
      visibility = "protected"
    }
    most_recent = true
  }
  flavor                    = "m1.small"
  communicator              = "none"
  image_visibility          = "private"
  image_members             = ["{{.ShareProject}}"]`},
	{"auto-accept-alone", `
  source_image_name         = "Rocky-9-GenericCloud-Base-9.6"
  flavor                    = "m1.small"
  communicator              = "none"
  image_auto_accept_members = true`},
	// Network discovery with two hits: the template's order or Neutron's.
	// The lab's VMs boot only on lab-net, so the server is refused (a
	// zero-disk flavor): the create call shows the network asked for.
	{"discovery-order", `
  source_image_name       = "Rocky-9-GenericCloud-Base-9.6"
  flavor                  = "behave.zero-disk"
  network_discovery_cidrs = ["172.16.0.0/12", "10.0.0.0/8"]
  communicator            = "none"`},
	// instance_floating_ip_net naming a network the server is not on.
	{"floating-ip-unmatched", `
  source_image_name        = "Rocky-9-GenericCloud-Base-9.6"
  flavor                   = "m1.small"
  networks                 = ["{{.LabNet}}"]
  floating_ip_network      = "public"
  instance_floating_ip_net = "{{.PublicNet}}"
  communicator             = "none"`},
	// floating_ip_network by name, not an external network.
	{"floating-ip-not-external", `
  source_image_name   = "Rocky-9-GenericCloud-Base-9.6"
  flavor              = "m1.small"
  floating_ip_network = "lab-net"
  communicator        = "none"`},
	// A filter name with a shell pattern: Glance compares names exactly.
	{"filter-pattern", `
  source_image_filter {
    filters {
      name = "Rocky-9-GenericCloud-*"
    }
    most_recent = true
  }
  flavor       = "m1.small"
  communicator = "none"`},
	// A floating IP of the project, by ID and by address; the key of the
	// given keypair from an SSH agent; the keypair with neither key nor
	// agent (refused at validate).
	{"floating-ip-id", `
  source_image_name = "Rocky-9-GenericCloud-Base-9.6"
  flavor            = "m1.small"
  networks          = ["{{.LabNet}}"]
  floating_ip       = "{{.FloatingIPID}}"
  communicator      = "none"`},
	{"floating-ip-address", `
  source_image_name = "Rocky-9-GenericCloud-Base-9.6"
  flavor            = "m1.small"
  networks          = ["{{.LabNet}}"]
  floating_ip       = "{{.FloatingIPAddress}}"
  communicator      = "none"`},
	{"agent-auth", `
  source_image_name   = "Rocky-9-GenericCloud-Base-9.6"
  flavor              = "m1.small"
  networks            = ["{{.LabNet}}"]
  floating_ip_network = "public"
  ssh_username        = "rocky"
  ssh_timeout         = "1m"
  ssh_agent_auth      = true
  ssh_keypair_name    = "{{.KeyPair}}"`},
	{"keypair-name-alone", `
  source_image_name = "Rocky-9-GenericCloud-Base-9.6"
  flavor            = "m1.small"
  ssh_username      = "rocky"
  ssh_keypair_name  = "{{.KeyPair}}"`},
	// A volume from an image Glance imported (its os_glance_* properties
	// go into the volume's image metadata; official issue #123).
	{"volume-from-imported", `
  source_image            = "{{.ImportedImage}}"
  flavor                  = "m1.small"
  networks                = ["{{.LabNet}}"]
  use_blockstorage_volume = true
  volume_size             = 20
  communicator            = "none"`},
	// A flavor with no disk and no volume: Nova decides (a member may not).
	{"zero-disk-flavor", `
  source_image_name = "Rocky-9-GenericCloud-Base-9.6"
  flavor            = "behave.zero-disk"
  communicator      = "none"`},
}

// behaviourVars are what the cases' bodies refer to.
type behaviourVars struct {
	Cloud, ImageName, BaseImage, LabNet, PublicNet, ShareProject string
	KeyPair, KeyFile, PublicKey, UserDataFile                    string
	FloatingIPID, FloatingIPAddress, ImportedImage               string
	agentKey                                                     ed25519.PrivateKey
}

// documentedDifference is one difference a case shows, and the row of the
// docs' table that explains it (its first cell).
type documentedDifference struct {
	row            string
	key            string
	official, ours string
	cases          []string // the cases it shows in
}

// The cases by what they make: a server (in both builds), a temporary
// keypair for nothing (communicator none), an image (in both builds), a
// server snapshot, a volume.
var (
	serverCases = []string{"docs-private-cloud", "docs-volume", "appliance", "snapshot-image-settings", "network-discovery",
		"filter-members-private", "auto-accept-alone", "zero-disk-flavor", "discovery-order", "floating-ip-unmatched",
		"floating-ip-not-external", "floating-ip-id", "floating-ip-address", "agent-auth", "volume-from-imported"}
	initAddCases = slices.DeleteFunc(slices.Clone(serverCases), func(c string) bool { return c == "appliance" })
	noCommCases  = []string{"docs-volume", "snapshot-image-settings", "network-discovery", "filter-members-private", "auto-accept-alone",
		"zero-disk-flavor", "discovery-order", "floating-ip-unmatched", "floating-ip-not-external", "floating-ip-id", "floating-ip-address",
		"volume-from-imported"}
	keypairCases = append(slices.Clone(noCommCases), "filter-pattern")
	imageCases   = []string{"docs-private-cloud", "docs-volume", "appliance", "snapshot-image-settings", "network-discovery", "auto-accept-alone", "floating-ip-id"}
	snapCases    = []string{"docs-private-cloud", "snapshot-image-settings", "network-discovery", "filter-members-private", "auto-accept-alone", "floating-ip-id"}
	volumeCases  = []string{"docs-volume", "appliance", "volume-from-imported"}
)

// Rows of the table named more than once below.
const (
	rowNoComm         = "temporary keypair with `communicator = \"none\"` or with `winrm_password`"
	rowFloatingIP     = "the port the floating IP goes to (`instance_floating_ip_net`, `networks`, `ports`)"
	rowFilterName     = "`source_image_filter.filters.name` with `*`, `?` or `[`"
	rowImageProps     = "output image properties"
	rowLeftovers      = "leftovers"
	rowAutoAccept     = "`image_auto_accept_members`"
	rowVolumeSize     = "`volume_size` default"
	rowNotExternal    = "`floating_ip_network` that is not external"
	rowFloatingIPAddr = "`floating_ip`"
	rowAgentKeypair   = "`ssh_agent_auth` with `ssh_keypair_name`"
	rowImported       = "`use_blockstorage_volume` from an imported image (`external_source_image_url` or any image Glance imported)"
)

// documentedDifferences are exactly the differences the suite finds. A
// key ending in "*" covers the keys it starts; a value "*" any value.
var documentedDifferences = []documentedDifference{
	{"`instance_metadata`", "server.create.metadata.ansible_init_disable", "(none)", "true", initAddCases},
	{rowNoComm, "keypair.create.name", "<temporary keypair>", "(none)", keypairCases},
	{rowNoComm, "keypair.create.public_key", "ssh-rsa", "(none)", keypairCases},
	{rowNoComm, "keypair.delete", "<temporary keypair>", "(none)", keypairCases},
	{rowNoComm, "server.create.key_name", "<temporary keypair>", "(none)", noCommCases},
	{"`temporary_key_pair_type` default", "keypair.create.public_key", "ssh-rsa", "ssh-ed25519", []string{"docs-private-cloud"}},
	{"`skip_inherited_properties` (ours only)", "image.signature_verified", "False", "(none)", imageCases},
	{rowVolumeSize, "volume.create.size", "10", "20", []string{"docs-volume"}},
	{rowVolumeSize, "image.min_disk", "10", "20", []string{"docs-volume"}},
	{"`volume_name` default", "volume.create.name", "packer_<id>", "<image_name>", []string{"docs-volume", "volume-from-imported"}},
	{rowImported, "build", "fails", "ok", []string{"volume-from-imported"}},
	{rowImported, "image.status", "(no image)", "active", []string{"volume-from-imported"}},
	{rowImported, "volume.action.os-volume_upload_image.failed", "403", "(none)", []string{"volume-from-imported"}},
	{rowImported, "volume.action.os-unset_image_metadata.key", "(none)", "os_glance_failed_import | os_glance_importing_to_stores", []string{"volume-from-imported"}},
	{rowAutoAccept, "image.members.<share project>", "pending", "accepted", []string{"snapshot-image-settings"}},
	{rowAutoAccept, "build", "fails", "ok", []string{"snapshot-image-settings"}},
	{"`network_discovery_cidrs` matching several subnets", "server.create.networks[0].uuid", "<lab-net>", "<public>", []string{"discovery-order"}},
	{rowFloatingIP, "build", "ok", "fails", []string{"floating-ip-unmatched"}},
	{rowFloatingIP, "image.status", "active", "(no image)", []string{"floating-ip-unmatched"}},
	{rowFloatingIP, "floatingip.*", "*", "(none)", []string{"floating-ip-unmatched"}},
	{rowFloatingIP, "server.action.*", "*", "(none)", []string{"floating-ip-unmatched"}},
	{rowNotExternal, "floatingip.create.network", "(none)", "<lab-net>", []string{"floating-ip-not-external"}},
	{rowNotExternal, "floatingip.create.failed", "(none)", "400", []string{"floating-ip-not-external"}},
	{rowFilterName, "build", "fails", "ok", []string{"filter-pattern"}},
	{rowFilterName, "image.status", "(no image)", "active", []string{"filter-pattern"}},
	{rowFilterName, "server.*", "(none)", "*", []string{"filter-pattern"}},
	{rowFloatingIPAddr, "build", "fails", "ok", []string{"floating-ip-address"}},
	{rowFloatingIPAddr, "image.status", "(no image)", "active", []string{"floating-ip-address"}},
	{rowFloatingIPAddr, "floatingip.port_on", "(none)", "lab-net", []string{"floating-ip-address"}},
	{rowFloatingIPAddr, "server.action.*", "(none)", "*", []string{"floating-ip-address"}},
	{rowAgentKeypair, "server.create.key_name", "(none)", "<given keypair>", []string{"agent-auth"}},
	{rowAgentKeypair, "build", "fails", "ok", []string{"agent-auth"}},
	{rowAgentKeypair, "image.status", "(no image)", "active", []string{"agent-auth"}},
	{rowAgentKeypair, "server.action.*", "(none)", "*", []string{"agent-auth"}},
	{rowImageProps, "image.fatimage_build_id", "(none)", "<id>", imageCases},
	{rowImageProps, "server.action.createImage.metadata.fatimage_build_id", "(none)", "<id>", snapCases},
	{rowImageProps, "volume.action.os-set_image_metadata.metadata.fatimage_build_id", "(none)", "<id>", volumeCases},
	{rowLeftovers, "server.create.metadata.fatimage_build_id", "(none)", "<id>", serverCases},
	{rowLeftovers, "volume.create.metadata.fatimage_build_id", "(none)", "<id>", volumeCases},
	{rowLeftovers, "volume.create.description", "(none)", "boot volume of Packer build packer_<id>", volumeCases},
	{rowLeftovers, "image.status", "active", "(no image)", []string{"filter-members-private"}},
}

// TestBehaviourAgainstOfficial runs every case under both builders and
// compares their effects on the cloud with the documented differences.
func TestBehaviourAgainstOfficial(t *testing.T) {
	labtest.Require(t)
	started := time.Now()
	bin := officialPlugin(t, "packer-plugin-openstack")
	p := packertest.Setup(t)
	if r := p.Run(t, t.TempDir(), nil, "plugins", "install", "--path", bin, "github.com/hashicorp/openstack"); r.ExitCode != 0 {
		t.Fatalf("packer plugins install: %s", r.Output())
	}
	// registered first, so it runs after the cleanups of what the setup made
	t.Cleanup(func() { labtest.RequireClean(t, theLab) })
	base := behaviourSetup(t)
	theLab.Cloud.RecordRequests(true)
	t.Cleanup(func() { theLab.Cloud.RecordRequests(false) })

	// One parallel subtest per build, the two of a case side by side; the
	// builds are compared once all are done. A build waiting for a slot
	// holds nothing another needs (no deadlock with -parallel).
	var mu sync.Mutex
	runs := map[string]effects{} // by case and builder
	t.Run("builds", func(t *testing.T) {
		sem := make(chan struct{}, 4) // at most four packers at a time
		nonce := fmt.Sprintf("bh%d", time.Now().UnixNano()%1e9)
		for _, bc := range behaviourCases {
			for _, typ := range []string{"openstack", "fatimage-openstack"} {
				t.Run(bc.name+"/"+typ, func(t *testing.T) {
					t.Parallel()
					sem <- struct{}{}
					defer func() { <-sem }()
					v := base
					v.ImageName = fmt.Sprintf("%s-%s-%s", nonce, bc.name, map[string]string{"openstack": "official", "fatimage-openstack": "ours"}[typ])
					e := runOne(t, p, typ, bc, v)
					mu.Lock()
					runs[bc.name+"/"+typ] = e
					mu.Unlock()
				})
			}
		}
	})
	found := map[string][]difference{} // by case
	for _, bc := range behaviourCases {
		found[bc.name] = compareEffects(runs[bc.name+"/openstack"], runs[bc.name+"/fatimage-openstack"])
	}
	checkDifferences(t, found)
	t.Logf("behaviour suite: %d cases, wall time %s", len(behaviourCases), time.Since(started).Round(time.Second))
}

// behaviourSetup makes what the cases share: a keypair and its private
// key, a user_data file, a flavor with no disk.
func behaviourSetup(t *testing.T) behaviourVars {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	must(t, err)
	blk, err := ssh.MarshalPrivateKey(priv, "")
	must(t, err)
	sshPub, err := ssh.NewPublicKey(pub)
	must(t, err)
	dir := t.TempDir()
	v := behaviourVars{
		Cloud: "behave", BaseImage: theLab.BaseImageID, ShareProject: theLab.Env["LAB_SHARE_PROJECT_ID"],
		KeyPair: "behave-given", KeyFile: filepath.Join(dir, "id_ed25519"), UserDataFile: filepath.Join(dir, "user-data"),
		PublicKey: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sshPub))), agentKey: priv,
	}
	must(t, os.WriteFile(v.KeyFile, pem.EncodeToMemory(blk), 0o600))
	must(t, os.WriteFile(v.UserDataFile, []byte("#cloud-config\n# from user_data_file\n"), 0o600))
	theLab.Cloud.AddFlavor(cloud.Flavor{ID: "behave-zero", Name: "behave.zero-disk", VCPUs: 1, RAM: 2048, Disk: 0})
	v.LabNet = networkID(t, labNetworkClient(t), "lab-net")
	v.PublicNet = networkID(t, labNetworkClient(t), "public")
	v.ImportedImage = importedImage(t)
	return v
}

// runUser makes a lab user of its own for one packer run (its calls are
// told apart by user), with the given keypair, and returns the
// environment that makes packer use it (clouds.yaml entry v.Cloud).
func runUser(t *testing.T, v behaviourVars) ([]string, *gophercloud.ProviderClient) {
	t.Helper()
	pw := make([]byte, 16)
	_, _ = rand.Read(pw)
	u := cloud.User{Name: v.ImageName, Password: hex.EncodeToString(pw), Project: "lab", OtherProjects: []string{lab.ShareProject}}
	must(t, theLab.Cloud.AddUser(u))
	auth := map[string]any{"auth_url": theLab.Cloud.AuthURL(), "username": u.Name, "password": u.Password,
		"project_name": "lab", "user_domain_name": "Default", "project_domain_name": "Default"}
	clouds, err := json.Marshal(map[string]any{"clouds": map[string]any{v.Cloud: map[string]any{
		"auth": auth, "region_name": "RegionOne", "interface": "public", "identity_api_version": 3}}})
	must(t, err)
	file := filepath.Join(t.TempDir(), "clouds.yaml")
	must(t, os.WriteFile(file, clouds, 0o600))
	ctx := context.Background()
	provider, err := openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{IdentityEndpoint: theLab.Cloud.AuthURL(),
		Username: u.Name, Password: u.Password, TenantName: "lab", DomainName: "Default"})
	must(t, err)
	compute, err := openstack.NewComputeV2(provider, gophercloud.EndpointOpts{Region: "RegionOne"})
	must(t, err)
	_, err = keypairs.Create(ctx, compute, keypairs.CreateOpts{Name: v.KeyPair, PublicKey: v.PublicKey}).Extract()
	must(t, err)
	t.Cleanup(func() { keypairs.Delete(context.Background(), compute, v.KeyPair, nil) })
	return append(theLab.Environ(), "OS_CLIENT_CONFIG_FILE="+file, "OS_CLOUD="+v.Cloud), provider
}

// runExtras makes what only some cases use, as the run's user: a floating
// IP of its own ({{.FloatingIPID}}, {{.FloatingIPAddress}}), an SSH agent
// holding the given keypair's key (ssh_agent_auth).
func runExtras(t *testing.T, bc behaviourCase, v behaviourVars, env []string, provider *gophercloud.ProviderClient) (behaviourVars, []string) {
	t.Helper()
	if strings.Contains(bc.body, ".FloatingIP") {
		nc, err := openstack.NewNetworkV2(provider, gophercloud.EndpointOpts{Region: "RegionOne"})
		must(t, err)
		fip, err := floatingips.Create(context.Background(), nc, floatingips.CreateOpts{FloatingNetworkID: v.PublicNet}).Extract()
		must(t, err)
		t.Cleanup(func() { floatingips.Delete(context.Background(), nc, fip.ID) })
		v.FloatingIPID, v.FloatingIPAddress = fip.ID, fip.FloatingIP
	}
	if strings.Contains(bc.body, "ssh_agent_auth") {
		env = append(env, "SSH_AUTH_SOCK="+serveAgent(t, v.agentKey))
	}
	return v, env
}

// serveAgent serves an SSH agent holding key on a socket of its own.
func serveAgent(t *testing.T, key ed25519.PrivateKey) string {
	t.Helper()
	keyring := agent.NewKeyring()
	must(t, keyring.Add(agent.AddedKey{PrivateKey: key}))
	dir, err := os.MkdirTemp("", "bh-agent") // short: a socket path has at most 107 bytes
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "agent.sock")
	l, err := net.Listen("unix", sock)
	must(t, err)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = agent.ServeAgent(keyring, c)
			}()
		}
	}()
	return sock
}

// importedImage seeds the base image as Glance leaves an imported one:
// with its (empty) reserved os_glance_* import properties.
func importedImage(t *testing.T) string {
	t.Helper()
	disk, err := theLab.VMs.CloneDisk(theLab.BaseImageDisk)
	must(t, err)
	id, err := theLab.Cloud.AddImage(cloud.ImageSeed{Name: "behave-imported", Disk: disk, MinDisk: 10,
		Properties: map[string]string{"os_distro": "rocky", "os_glance_importing_to_stores": "", "os_glance_failed_import": ""}})
	must(t, err)
	t.Cleanup(func() { images.Delete(context.Background(), imageClient(t), id) })
	return id
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// runOne validates and builds one case with one builder and reads its
// effects.
func runOne(t *testing.T, p *packertest.Packer, typ string, bc behaviourCase, v behaviourVars) effects {
	dir := t.TempDir()
	env, provider := runUser(t, v)
	v, env = runExtras(t, bc, v, env, provider)
	start := len(theLab.Cloud.Requests()) // what the test made is not the build's
	var body bytes.Buffer
	if err := template.Must(template.New(bc.name).Parse(bc.body)).Execute(&body, v); err != nil {
		t.Error(err)
		return nil
	}
	hcl := fmt.Sprintf("source %q \"b\" {\n  cloud = %q\n  image_name = %q\n%s\n}\n\nbuild {\n  sources = [\"source.%s.b\"]\n}\n", typ, v.Cloud, v.ImageName, body.String(), typ)
	if err := os.WriteFile(filepath.Join(dir, "b.pkr.hcl"), []byte(hcl), 0o600); err != nil {
		t.Error(err)
		return nil
	}
	e := effects{}
	val := p.Run(t, dir, env, "validate", ".")
	e.add("validate", outcome(val.ExitCode))
	if val.ExitCode != 0 {
		t.Logf("%s: packer validate:\n%s", typ, val.Output())
		return e
	}
	r := p.Run(t, dir, env, "build", ".")
	e.add("build", outcome(r.ExitCode))
	if r.ExitCode != 0 {
		t.Logf("%s: packer build failed:\n%s", typ, tail(r.Output(), 20))
	}
	reqs := userRequests(theLab.Cloud.Requests()[start:], v.ImageName)
	if len(reqs) == 0 {
		t.Errorf("%s: the cloud recorded no call of this build", typ)
	}
	n := newNormaliser(t, v)
	for k, w := range n.buildEffects(reqs) {
		e[k] = w
	}
	img, members := leftImage(t, v.ImageName)
	n.imageEffects(e, img, members)
	if os.Getenv("BEHAVIOUR_VERBOSE") != "" {
		t.Logf("%s: effects:\n%s", typ, e)
	}
	return e
}

func outcome(code int) string {
	if code == 0 {
		return "ok"
	}
	return "fails"
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// userRequests are the calls user made.
func userRequests(all []cloud.Request, user string) []cloud.Request {
	var out []cloud.Request
	for _, r := range all {
		if r.User == user {
			out = append(out, r)
		}
	}
	return out
}

func newNormaliser(t *testing.T, v behaviourVars) *normaliser {
	n := &normaliser{imageName: v.ImageName, subnets: map[string]*net.IPNet{}, known: map[string]string{
		v.BaseImage: "<base image>", v.ImportedImage: "<imported image>", v.FloatingIPID: "<floating_ip>", v.FloatingIPAddress: "<floating_ip address>", v.ShareProject: "<share project>", v.KeyPair: "<given keypair>",
		theLab.Cloud.ProjectID(lab.CloudName): "<lab project>",
	}}
	delete(n.known, "") // a case without a floating IP of its own
	nc := labClient(t, openstack.NewNetworkV2)
	pages, err := subnets.List(nc, subnets.ListOpts{}).AllPages(context.Background())
	if err != nil {
		t.Error(err)
		return n
	}
	all, _ := subnets.ExtractSubnets(pages)
	for _, s := range all {
		name := "<" + s.NetworkID + ">"
		if nw, err := networks.Get(context.Background(), nc, s.NetworkID).Extract(); err == nil {
			name = nw.Name
			n.known[nw.ID] = "<" + nw.Name + ">"
		}
		if _, ipn, err := net.ParseCIDR(s.CIDR); err == nil {
			n.subnets[name] = ipn
		}
	}
	return n
}

// leftImage reads the image a build left (its Glance record and members),
// and deletes it.
func leftImage(t *testing.T, name string) (map[string]any, []map[string]any) {
	ctx := context.Background()
	ic := imageClient(t)
	pages, err := images.List(ic, images.ListOpts{Name: name}).AllPages(ctx)
	if err != nil {
		t.Error(err)
		return nil, nil
	}
	all, _ := images.ExtractImages(pages)
	if len(all) == 0 {
		return map[string]any{"status": "(no image)"}, nil
	}
	if len(all) > 1 {
		t.Errorf("%d images named %s", len(all), name)
	}
	id := all[0].ID
	defer images.Delete(ctx, ic, id)
	var img map[string]any
	if _, err := ic.Get(ctx, ic.ServiceURL("images", id), &img, nil); err != nil {
		t.Error(err)
	}
	var ms struct{ Members []map[string]any }
	if _, err := ic.Get(ctx, ic.ServiceURL("images", id, "members"), &ms, nil); err != nil {
		t.Error(err)
	}
	return img, ms.Members
}

// difference is one effect the two builds of a case differ in.
type difference struct{ key, official, ours string }

func (d difference) String() string {
	return fmt.Sprintf("%s: official %s, ours %s", d.key, d.official, d.ours)
}

// compareEffects lists the keys whose values differ.
func compareEffects(off, ours effects) []difference {
	withoutImage(off, ours)
	keys := map[string]bool{}
	for k := range off {
		keys[k] = true
	}
	for k := range ours {
		keys[k] = true
	}
	var out []difference
	for k := range keys {
		if a, b := off.value(k), ours.value(k); a != b {
			out = append(out, difference{k, a, b})
		}
	}
	return out
}

// explains reports whether documented difference d covers f found in
// case c: the case is one of d's, the key is d's (or starts with d's
// key before a trailing "*"), the values are d's ("*": any).
func (d documentedDifference) explains(c string, f difference) bool {
	match := func(pat, s string) bool {
		if p, ok := strings.CutSuffix(pat, "*"); ok {
			return strings.HasPrefix(s, p)
		}
		return pat == s
	}
	return slices.Contains(d.cases, c) && match(d.key, f.key) && match(d.official, f.official) && match(d.ours, f.ours)
}

// checkDifferences holds what the cases found (by case) to
// documentedDifferences, both ways, and each documented difference to a
// row of the docs' table.
func checkDifferences(t *testing.T, found map[string][]difference) {
	t.Helper()
	rows := differenceRows(t)
	for _, d := range documentedDifferences {
		if !rows[d.row] {
			t.Errorf("documented difference %s names row %q, which docs/builders/openstack.mdx's table does not have", d.key, d.row)
		}
	}
	undocumented, gone := unexplained(documentedDifferences, found)
	if len(undocumented) > 0 {
		t.Errorf("differences from the official builder that the docs' table does not explain:\n%s", strings.Join(undocumented, "\n"))
	}
	if len(gone) > 0 {
		t.Errorf("documented differences that no longer occur (update the table):\n%s", strings.Join(gone, "\n"))
	}
}

// unexplained lists the differences found that no documented one explains,
// and the documented ones that a case they name did not show.
func unexplained(docs []documentedDifference, found map[string][]difference) (undocumented, gone []string) {
	for _, d := range docs {
		for _, c := range d.cases {
			if !slices.ContainsFunc(found[c], func(f difference) bool { return d.explains(c, f) }) {
				gone = append(gone, fmt.Sprintf("%s: %s (row %s)", c, difference{d.key, d.official, d.ours}, d.row))
			}
		}
	}
	for c, fs := range found {
		for _, f := range fs {
			if !slices.ContainsFunc(docs, func(d documentedDifference) bool { return d.explains(c, f) }) {
				undocumented = append(undocumented, c+": "+f.String())
			}
		}
	}
	sort.Strings(undocumented)
	sort.Strings(gone)
	return undocumented, gone
}

// differenceRows are the first cells of the docs' table of differences.
func differenceRows(t *testing.T) map[string]bool {
	t.Helper()
	root, err := packertest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "docs", "builders", "openstack.mdx"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "## Differences from the official builder")
	if !ok {
		t.Fatal("docs/builders/openstack.mdx has no section \"Differences from the official builder\"")
	}
	rows := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\| ([^|]+) \|`).FindAllStringSubmatch(table, -1) {
		rows[strings.TrimSpace(m[1])] = true
	}
	return rows
}
