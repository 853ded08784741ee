// Package badinput runs invalid templates through `packer validate` with
// the real packer binary and this plugin installed, and checks that each
// is refused with a message naming the offending field, without any
// network call (issue 7, "Bad input").
//
// What `packer validate` does with the pinned packer (v1.16.0), read from
// its command/validate.go and hcl2template/types.packer_config.go and
// checked with that binary:
//
//   - Without -evaluate-datasources (the default; these tests never pass
//     it) every data source is still started and its Configure called, so
//     the data source's Prepare errors are reported; only Execute is
//     skipped and its output replaced by an unknown value of the output
//     spec. A data source error ends validation before any build is
//     prepared. (The "valid data source" control proves Execute is
//     skipped: its content URLs are the recording server's.)
//   - Builders' and provisioners' Prepare run for every build (GetBuilds).
//   - A template with no build block is refused ("Missing build block"),
//     so the data source templates carry a build of the core `null`
//     builder.
//
// Every URL in the templates points at a local recording server (@REC@)
// and HTTP(S)_PROXY at a second one, so a request to any other host is
// recorded too; both must see no connection at all, over the invalid
// cases and the valid controls alike. TestRecordersObserve shows the
// recorders do see the plugin's calls when there are any. Name lookups,
// and dials by a client that ignores the proxy settings, are not observed.
package badinput

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/figures"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
)

func TestMain(m *testing.M) {
	code := figures.Main(m)
	packertest.Cleanup()
	os.Exit(code)
}

// recorder is an HTTP server counting every connection and request it
// gets. It answers 404, so a client that does reach it fails fast.
type recorder struct {
	srv   *httptest.Server
	conns atomic.Int64
	mu    sync.Mutex
	reqs  []string
}

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	r := &recorder{}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.reqs = append(r.reqs, req.Method+" "+req.Host+" "+req.RequestURI)
		r.mu.Unlock()
		http.NotFound(w, req)
	}))
	r.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			r.conns.Add(1)
		}
	}
	r.srv.Start()
	t.Cleanup(r.srv.Close)
	return r
}

func (r *recorder) URL() string { return r.srv.URL }

// seen is the number of connections and the requests made so far.
func (r *recorder) seen() (int64, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.conns.Load(), append([]string(nil), r.reqs...)
}

// network is the recorders and the environment every packer run gets.
type network struct {
	rec, proxy *recorder
}

func newNetwork(t *testing.T) *network {
	return &network{rec: newRecorder(t), proxy: newRecorder(t)}
}

// env is the base environment: proxies at the proxy recorder (localhost
// is never proxied, so @REC@ is reached directly), OpenStack credentials
// with the auth URL at the recorder, no Ark credentials, no clouds.yaml.
func (n *network) env(dir string) []string {
	p := n.proxy.URL()
	return []string{
		"HTTP_PROXY=" + p, "HTTPS_PROXY=" + p, "http_proxy=" + p, "https_proxy=" + p,
		"NO_PROXY=", "no_proxy=",
		"OS_AUTH_URL=" + n.rec.URL() + "/v3",
		"OS_USERNAME=builder", "OS_PASSWORD=secret",
		"OS_PROJECT_NAME=project", "OS_USER_DOMAIN_NAME=Default", "OS_PROJECT_DOMAIN_NAME=Default",
		"OS_CLOUD=", "OS_CLIENT_CONFIG_FILE=" + filepath.Join(dir, "no-clouds.yaml"),
		"OS_TOKEN=", "OS_AUTH_TOKEN=", "OS_INTERFACE=", "OS_ENDPOINT_TYPE=", "OS_CACERT=", "OS_CERT=", "OS_KEY=",
		"OS_APPLICATION_CREDENTIAL_ID=", "OS_APPLICATION_CREDENTIAL_NAME=", "OS_APPLICATION_CREDENTIAL_SECRET=",
		"ARK_USERNAME=", "ARK_PASSWORD=", "SITE_PULP_USERNAME=", "SITE_PULP_PASSWORD=",
		"PACKER_CACHE_DIR=" + filepath.Join(dir, "cache"),
		"PACKER_LOG=",
	}
}

// subst replaces the placeholders of a tcase for a run in dir.
func (n *network) subst(dir string) func(string) string {
	return strings.NewReplacer("@REC@", n.rec.URL(), "@RECHOST@", n.rec.srv.Listener.Addr().String(), "@DIR@", dir).Replace
}

// requireQuiet fails the test if either recorder saw a connection.
func (n *network) requireQuiet(t *testing.T) {
	t.Helper()
	for _, r := range []struct {
		name string
		rec  *recorder
	}{{"recording server", n.rec}, {"proxy", n.proxy}} {
		if conns, reqs := r.rec.seen(); conns != 0 || len(reqs) != 0 {
			t.Errorf("the %s saw %d connections and requests %q; want none", r.name, conns, reqs)
		}
	}
}

const header = `packer {
  required_plugins {
    fatimage = {
      source  = "github.com/stackhpc/fatimage"
      version = ">= 0.1.0"
    }
  }
}
`

// attrs renders "key = value" lines from base with overrides: pairs of
// key and HCL expression, where the expression "-" removes the key and
// "block:BODY" makes a block "key { BODY }".
func attrs(base [][2]string, over ...string) string {
	if len(over)%2 != 0 {
		panic("attrs: odd overrides")
	}
	kv := append([][2]string(nil), base...)
	for i := 0; i < len(over); i += 2 {
		k, v := over[i], over[i+1]
		j := 0
		for ; j < len(kv) && kv[j][0] != k; j++ {
		}
		switch {
		case v == "-" && j < len(kv):
			kv = append(kv[:j], kv[j+1:]...)
		case v == "-":
		case j < len(kv):
			kv[j][1] = v
		default:
			kv = append(kv, [2]string{k, v})
		}
	}
	var b strings.Builder
	for _, p := range kv {
		if body, ok := strings.CutPrefix(p[1], "block:"); ok {
			fmt.Fprintf(&b, "  %s {\n%s  }\n", p[0], body)
			continue
		}
		fmt.Fprintf(&b, "  %s = %s\n", p[0], p[1])
	}
	return b.String()
}

const nullBuild = `
source "null" "n" {
  communicator = "none"
}

build {
  sources = ["source.null.n"]
}
`

const baseosRepo = `
  repo {
    name = "baseos"
    path = "rocky/9.6/BaseOS/x86_64/os"
  }
`

var dsBase = [][2]string{
	{"content_url", `"@REC@/pulp/content"`},
	{"os_version", `"9.6"`},
}

// repoPath is a baseos repo block with that path (an HCL string body).
func repoPath(path string) string {
	return "\n  repo {\n    name = \"baseos\"\n    path = \"" + path + "\"\n  }\n"
}

// ds is a data source with the given overrides and blocks (default: one
// baseos repo block), and a null build.
func ds(blocks string, over ...string) string {
	if blocks == "" {
		blocks = baseosRepo
	}
	return header + "\ndata \"fatimage-ark\" \"x\" {\n" + attrs(dsBase, over...) + blocks + "}\n" + nullBuild
}

var srcBase = [][2]string{
	{"source_image_name", `"Rocky-9-GenericCloud-Base-9.6"`},
	{"flavor", `"m1.small"`},
	{"floating_ip_network", `"public"`},
	{"ssh_username", `"rocky"`},
	{"image_name", `"fat-test"`},
}

// src is a fatimage-openstack source with the given overrides, built;
// credentials come from the OS_* environment.
func src(over ...string) string {
	return header + "\nsource \"fatimage-openstack\" \"x\" {\n" + attrs(srcBase, over...) + "}\n\nbuild {\n  sources = [\"source.fatimage-openstack.x\"]\n}\n"
}

var provBase = [][2]string{
	{"release_base_url", `"@REC@/releases"`},
	{"repos", `[{ name = "baseos", repo_file = "rocky", repo_name = "baseos", baseurl = "@REC@/pulp/content/rocky/9.6/BaseOS/x86_64/os/20251106T211545", gpgcheck = true }]`},
}

// prov is a fatimage provisioner with the given overrides on a null build.
func prov(over ...string) string { return provB("", over...) }

// provB is prov with blocks (users, files, gpg_keys, binaries are blocks).
func provB(blocks string, over ...string) string {
	return header + `
source "null" "n" {
  communicator = "none"
}

build {
  sources = ["source.null.n"]

  provisioner "fatimage" {
` + indent(attrs(provBase, over...)+blocks) + `  }
}
`
}

// blk is a block of that type with "key, HCL expression" pairs.
func blk(typ string, kv ...string) string {
	return typ + " {\n" + attrs(nil, kv...) + "}\n"
}

func indent(s string) string {
	return strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}

const sha = "9f5ea48e5bc7b656f8a91a32e7d7deb89f70f73dabd0d974418aca15f37d6810"

// tcase is one template for `packer validate`. In the template, files, env
// and messages, @REC@ is the recording server's URL, @RECHOST@ its
// host:port and @DIR@ the run directory.
type tcase struct {
	name      string
	component string // data source, builder, provisioner, or packer for HCL-level checks
	hcl       string
	env       []string          // added to the base environment
	files     map[string]string // more files in the run directory
	want      []string          // substrings the output must contain
	notWant   []string          // substrings it must not (secrets)
}

const (
	dsC   = "data source"
	srcC  = "builder"
	provC = "provisioner"
	hclC  = "packer (HCL)"
)

var cases = []tcase{
	// The fatimage-ark data source.
	{name: "ds mode unknown", component: dsC, hcl: ds("", "mode", `"sometimes"`),
		want: []string{`mode: "sometimes" is not one of "latest", "pinned", "not_after"`}},
	{name: "ds not_after malformed", component: dsC, hcl: ds("", "mode", `"not_after"`, "not_after", `"last tuesday"`),
		want: []string{`not_after: "last tuesday" is neither a timestamp like 20250101T000000 nor an RFC 3339 time like 2025-01-01T00:00:00Z`}},
	{name: "ds not_after missing", component: dsC, hcl: ds("", "mode", `"not_after"`),
		want: []string{`not_after: required with mode = "not_after"`}},
	{name: "ds not_after without its mode", component: dsC, hcl: ds("", "not_after", `"20250101T000000"`),
		want: []string{`not_after: only used with mode = "not_after", but mode is "latest"`}},
	{name: "ds os_version missing", component: dsC, hcl: ds("", "os_version", "-"),
		want: []string{`os_version: required, for example "9.6"`}},
	{name: "ds os_version not a version", component: dsC, hcl: ds("", "os_version", `"9/6"`),
		want: []string{`os_version: "9/6" is not a version such as "9.6"`}},
	{name: "ds only names unknown repo", component: dsC, hcl: ds("", "only", `["baseos", "nosuch"]`),
		want: []string{`only: no repository named "nosuch" (known: baseos)`}},
	{name: "ds skip leaves nothing", component: dsC, hcl: ds("", "skip", `["baseos"]`),
		want: []string{"only/skip: every repository is left out"}},
	{name: "ds content_url with credentials", component: dsC, hcl: ds("", "content_url", `"http://user:s3cret@@RECHOST@/pulp/content"`),
		want:    []string{`content_url: "http://user:xxxxx@@RECHOST@/pulp/content" must not contain credentials; use username and password`},
		notWant: []string{"s3cret"}},
	{name: "ds content_url not http", component: dsC, hcl: ds("", "content_url", `"ftp://@RECHOST@/pulp/content"`),
		want: []string{`content_url: "ftp://@RECHOST@/pulp/content" must be an absolute http:// or https:// URL`}},
	{name: "ds Ark content_url without credentials", component: dsC, hcl: ds("", "content_url", `"https://ark.stackhpc.com/pulp/content"`),
		want: []string{"username/password: https://ark.stackhpc.com/pulp/content needs credentials; set username and password (or ARK_USERNAME and ARK_PASSWORD)"}},
	{name: "ds default content_url without password", component: dsC, hcl: ds("", "content_url", "-", "username", `"me"`),
		want: []string{"username/password: https://ark.stackhpc.com/pulp/content needs credentials"}},
	{name: "ds timeout negative", component: dsC, hcl: ds("", "timeout", `"-5s"`),
		want: []string{"timeout: must be positive, got -5s"}},
	{name: "ds timeout not a duration", component: dsC, hcl: ds("", "timeout", `"soon"`),
		want: []string{`error decoding 'timeout': time: invalid duration "soon"`}},
	{name: "ds concurrency negative", component: dsC, hcl: ds("", "concurrency", "-2"),
		want: []string{"concurrency: must be at least 1, got -2"}},
	{name: "ds concurrency huge", component: dsC, hcl: ds("", "concurrency", "100000000"),
		want: []string{"concurrency: 100000000 is more than 64, the most repositories resolved at once"}},
	{name: "ds repo path climbing out with query and fragment", component: dsC, hcl: ds(repoPath(`../../../../admin?x=1#frag`)),
		want: []string{`repo[0].path: "../../../../admin?x=1#frag" contains "?": a repository path has no query, fragment, escapes or backslashes`}},
	{name: "ds repo path with ..", component: dsC, hcl: ds(repoPath(`rocky/../../../admin`)),
		want: []string{`repo[0].path: "rocky/../../../admin" has a ".." segment`}},
	{name: "ds repo path absolute", component: dsC, hcl: ds(repoPath(`/rocky/9.6/BaseOS/x86_64/os`)),
		want: []string{`repo[0].path: "/rocky/9.6/BaseOS/x86_64/os" is absolute; give the path below the content URL`}},
	{name: "ds repo path with a fragment", component: dsC, hcl: ds(repoPath(`rocky/9.6#frag`)),
		want: []string{`repo[0].path: "rocky/9.6#frag" contains "#"`}},
	{name: "ds repo path with an escape", component: dsC, hcl: ds(repoPath(`rocky/%2e%2e/admin`)),
		want: []string{`repo[0].path: "rocky/%2e%2e/admin" contains "%"`}},
	{name: "ds repo path with control characters", component: dsC, hcl: ds(repoPath(`rocky/9.6\r\nX-Injected: 1`)),
		want: []string{`repo[0].path: "rocky/9.6\r\nX-Injected: 1" contains a control or space character`}},
	{name: "ds repo path with an empty segment", component: dsC, hcl: ds(repoPath(`rocky//9.6`)),
		want: []string{`repo[0].path: "rocky//9.6" has an empty segment`}},
	{name: "ds timestamps_file pulp_path climbing out", component: dsC, hcl: ds("\n", "timestamps_file", `"@DIR@/ts.yml"`),
		files: map[string]string{"ts.yml": "dnf_repos_default:\n  baseos:\n    '9.6':\n      pulp_path: ../../admin\n      repo_file: rocky\n"},
		want:  []string{`repo "baseos" (9.6): pulp_path: "../../admin" has a ".." segment`}},
	{name: "ds timestamps_file missing", component: dsC, hcl: ds("\n", "timestamps_file", `"@DIR@/nope.yml"`),
		want: []string{"timestamps_file: open @DIR@/nope.yml: no such file or directory"}},
	{name: "ds timestamps_file malformed", component: dsC, hcl: ds("\n", "timestamps_file", `"@DIR@/ts.yml"`),
		files: map[string]string{"ts.yml": "dnf_repos_default: [not, a, mapping]\n"},
		want:  []string{"timestamps_file @DIR@/ts.yml: line 1: dnf_repos_default must be a mapping of repositories"}},
	{name: "ds timestamps_file entry without pulp_path", component: dsC, hcl: ds("\n", "timestamps_file", `"@DIR@/ts.yml"`),
		files: map[string]string{"ts.yml": "dnf_repos_default:\n  baseos:\n    '9.6':\n      pulp_timestamp: 20250101T000000\n"},
		want:  []string{`timestamps_file @DIR@/ts.yml: line 4: repo "baseos" (9.6): pulp_path is missing`}},
	{name: "ds ca_file missing", component: dsC, hcl: ds("", "ca_file", `"@DIR@/ca.pem"`),
		want: []string{"ca_file: stat @DIR@/ca.pem: no such file or directory"}},
	{name: "ds no repositories", component: dsC, hcl: ds("\n"),
		want: []string{"no repositories: set timestamps_file or appliance_dir, or add repo blocks"}},
	{name: "ds appliance_dir without pins", component: dsC, hcl: ds("\n", "appliance_dir", `"@DIR@"`),
		want: []string{"appliance_dir: @DIR@ has no environments/common/inventory/group_vars/all/dnf_repo_timestamps.yml: give the appliance checkout"}},
	{name: "ds pinned by default, an entry without its pin", component: dsC, hcl: ds("\n", "timestamps_file", `"@DIR@/ts.yml"`),
		files: map[string]string{"ts.yml": "dnf_repos_default:\n  baseos:\n    '9.6':\n      pulp_path: rocky/9.6/BaseOS/x86_64/os\n      repo_file: rocky\n"},
		want:  []string{`repo "baseos" (9.6): mode is "pinned", the default with a timestamps file, but no timestamp is given`}},
	{name: "ds repo block without name", component: dsC, hcl: ds("\n  repo {\n    path = \"rocky/9.6/BaseOS/x86_64/os\"\n  }\n"),
		want: []string{"repo[0].name: required"}},
	{name: "ds repo given twice", component: dsC, hcl: ds(baseosRepo + baseosRepo),
		want: []string{`repo[1].name: repository "baseos" is given twice`}},
	{name: "ds repo block without path", component: dsC, hcl: ds("\n  repo {\n    name = \"epel\"\n  }\n"),
		want: []string{`repo[0].path: required, as the timestamps file has no "epel" entry for 9.6`}},
	{name: "ds repo timestamp malformed", component: dsC, hcl: ds("\n  repo {\n    name = \"baseos\"\n    path = \"rocky/9.6/BaseOS/x86_64/os\"\n    timestamp = \"2025-01-01\"\n  }\n"),
		want: []string{`repo[0].timestamp: "2025-01-01" is not a snapshot timestamp of the form YYYYMMDDThhmmss`}},
	{name: "ds pinned without timestamp", component: dsC, hcl: ds("", "mode", `"pinned"`),
		want: []string{`repo "baseos" (9.6): mode is "pinned", but no timestamp is given`}},
	{name: "ds repo content_url with query", component: dsC, hcl: ds("\n  repo {\n    name = \"baseos\"\n    path = \"rocky/9.6/BaseOS/x86_64/os\"\n    content_url = \"@REC@/pulp/content?x=1\"\n  }\n"),
		want: []string{`repo[0].content_url: "@REC@/pulp/content?x=1" must not have a query or fragment`}},
	{name: "ds site_pulp url missing", component: dsC, hcl: ds("\n  site_pulp {\n    username = \"u\"\n    password = \"Site-Pw-x\"\n  }\n"),
		want: []string{`site_pulp.url: required, the site Pulp's API base such as "http://pulp.site:8080"`}},
	{name: "ds site_pulp url is the API path", component: dsC, hcl: ds("\n  site_pulp {\n    url = \"@REC@/pulp/api/v3/\"\n    username = \"u\"\n    password = \"Site-Pw-x\"\n  }\n"),
		want: []string{`site_pulp.url: "@REC@/pulp/api/v3/" must be the base before /pulp/api/v3/, for example "@REC@"`}},
	{name: "ds site_pulp without credentials", component: dsC, hcl: ds("\n  site_pulp {\n    url = \"@REC@\"\n  }\n"),
		want: []string{"site_pulp.username/site_pulp.password: the site Pulp's API needs credentials; set username and password in site_pulp (or SITE_PULP_USERNAME and SITE_PULP_PASSWORD)"}},
	{name: "ds site_pulp policy unknown", component: dsC, hcl: ds("\n  site_pulp {\n    url = \"@REC@\"\n    username = \"u\"\n    password = \"Site-Pw-x\"\n    policy = \"lazy\"\n  }\n"),
		want: []string{`site_pulp.policy: "lazy" is not one of "on_demand", "immediate"`}},
	{name: "ds site_pulp task_timeout negative", component: dsC, hcl: ds("\n  site_pulp {\n    url = \"@REC@\"\n    username = \"u\"\n    password = \"Site-Pw-x\"\n    task_timeout = \"-1m\"\n  }\n"),
		want: []string{"site_pulp.task_timeout: must be positive, got -1m0s"}},

	// The fatimage-openstack builder.
	{name: "builder flavor missing", component: srcC, hcl: src("flavor", "-"),
		want: []string{"flavor: required"}},
	{name: "builder image_name missing", component: srcC, hcl: src("image_name", "-"),
		want: []string{"image_name: required"}},
	{name: "builder two source images", component: srcC, hcl: src("source_image", `"7b5f7c4e-0d6c-4b4e-9d0e-6f3f3a1f0c11"`),
		want: []string{"source_image: exactly one of source_image, source_image_name, external_source_image_url, source_image_filter is required, got 2"}},
	{name: "builder no source image", component: srcC, hcl: src("source_image_name", "-"),
		want: []string{"source_image: exactly one of source_image, source_image_name, external_source_image_url, source_image_filter is required, got 0"}},
	{name: "builder ssh_username missing", component: srcC, hcl: src("ssh_username", "-"),
		want: []string{"An ssh_username must be specified"}},
	{name: "builder ssh_keypair_name without key", component: srcC, hcl: src("ssh_keypair_name", `"mykey"`),
		want: []string{"ssh_keypair_name: needs ssh_private_key_file or ssh_agent_auth = true"}},
	{name: "builder ssh_ip_version", component: srcC, hcl: src("ssh_ip_version", `"5"`),
		want: []string{`ssh_ip_version: "5" must be 4 or 6`}},
	{name: "builder volume_size negative", component: srcC, hcl: src("use_blockstorage_volume", "true", "volume_size", "-5"),
		want: []string{"volume_size: must be >= 0, got -5"}},
	{name: "builder image_visibility", component: srcC, hcl: src("image_visibility", `"everyone"`),
		want: []string{`image_visibility: "everyone" is not one of public, private, shared, community`}},
	{name: "builder image_creation_wait as a duration", component: srcC, hcl: src("image_creation_wait", `"30m"`),
		want: []string{`Inappropriate value for attribute "image_creation_wait": a number is required.`}},
	{name: "builder image_creation_wait negative", component: srcC, hcl: src("image_creation_wait", "-30"),
		want: []string{"image_creation_wait: a number of extra seconds to wait after the image is active, must be >= 0, got -30 (the bound on the wait is image_wait_timeout)"}},
	{name: "builder image_wait_timeout negative", component: srcC, hcl: src("image_wait_timeout", `"-1h"`),
		want: []string{"image_wait_timeout: must be > 0, got -1h0m0s"}},
	{name: "builder image_disk_format unknown", component: srcC, hcl: src("use_blockstorage_volume", "true", "image_disk_format", `"zip"`),
		want: []string{`image_disk_format: "zip" is not one of ami, ari, aki, vhd, vhdx, vmdk, raw, qcow2, vdi, ploop, iso`}},
	{name: "builder winrm password with an ed25519 key", component: srcC, hcl: src("ssh_username", "-", "communicator", `"winrm"`, "winrm_username", `"Administrator"`, "temporary_key_pair_type", `"ed25519"`),
		want: []string{`temporary_key_pair_type: "ed25519" cannot decrypt the Windows password Nova keeps; use rsa or set winrm_password`}},
	{name: "builder endpoint_type", component: srcC, hcl: src("endpoint_type", `"private"`),
		want: []string{`endpoint_type: "private" is not one of public, internal, admin (or publicURL, internalURL, adminURL)`}},
	{name: "builder identity endpoint missing", component: srcC, hcl: src(), env: []string{"OS_AUTH_URL="},
		want: []string{"identity_endpoint: required (or OS_AUTH_URL, or a clouds.yaml entry named by cloud/OS_CLOUD)"}},
	{name: "builder password missing", component: srcC, hcl: src(), env: []string{"OS_PASSWORD="},
		want: []string{"password: required with username or user_id"}},
	{name: "builder cloud not in clouds.yaml", component: srcC, hcl: src("cloud", `"nope"`),
		env:   []string{"OS_CLIENT_CONFIG_FILE=@DIR@/clouds.yaml"},
		files: map[string]string{"clouds.yaml": "clouds:\n  lab:\n    auth:\n      auth_url: @REC@/v3\n      username: u\n      password: p\n"},
		want:  []string{`cloud: "nope": cloud "nope" not found in clouds.yaml`}},
	// Horizon's clouds.yaml without OS_PASSWORD: what the file leaves blank
	// comes from the environment, and here nothing gives a password.
	{name: "builder clouds.yaml without a password", component: srcC, hcl: src("cloud", `"openstack"`),
		env:   []string{"OS_PASSWORD=", "OS_CLIENT_CONFIG_FILE=@DIR@/clouds.yaml"},
		files: map[string]string{"clouds.yaml": "clouds:\n  openstack:\n    auth:\n      auth_url: @REC@/v3\n      username: u\n      project_name: p\n      user_domain_name: Default\n"},
		want:  []string{"password: required with username or user_id"}},
	{name: "builder state_timeout negative", component: srcC, hcl: src("state_timeout", `"-1s"`),
		want: []string{"state_timeout: must be > 0, got -1s"}},
	{name: "builder state_timeout not a duration", component: srcC, hcl: src("state_timeout", `"soon"`),
		want: []string{`error decoding 'state_timeout': time: invalid duration "soon"`}},
	{name: "builder network_discovery_cidrs", component: srcC, hcl: src("network_discovery_cidrs", `["10.0.0.0"]`),
		want: []string{`network_discovery_cidrs: "10.0.0.0" is not a CIDR`}},
	{name: "builder image_properties attribute", component: srcC, hcl: src("image_properties", `{ min_disk = "20" }`),
		want: []string{`image_properties: "min_disk" is an image attribute, not a property; use its own option`}},
	{name: "builder user_data_file missing", component: srcC, hcl: src("user_data_file", `"@DIR@/user-data"`),
		want: []string{"user_data_file: open @DIR@/user-data: no such file or directory"}},
	{name: "builder cert without key", component: srcC, hcl: src("cert", `"@DIR@/cert.pem"`),
		files: map[string]string{"cert.pem": "not a cert\n"},
		want:  []string{"key: required with cert"}},
	{name: "builder ssh_timeout negative", component: srcC, hcl: src("ssh_timeout", `"-5m"`),
		want: []string{"ssh_timeout: must be > 0, got -5m0s"}},
	{name: "builder external_source_image_url file", component: srcC, hcl: src("source_image_name", "-", "external_source_image_url", `"file:///etc/passwd"`),
		want: []string{`external_source_image_url: "file:///etc/passwd" must be an http:// or https:// URL: Glance's web-download imports only those`}},
	{name: "builder floating_ip junk", component: srcC, hcl: src("floating_ip", `"the big one"`),
		want: []string{`floating_ip: "the big one" is neither an IP address nor a floating IP ID (a UUID)`}},
	{name: "builder networks by name", component: srcC, hcl: src("networks", `["lab-net"]`),
		want: []string{`networks[0]: "lab-net" is not an ID (a UUID): Nova takes IDs here, not names`}},
	{name: "builder image_members junk", component: srcC, hcl: src("image_visibility", `"shared"`, "image_members", `["the other project"]`),
		want: []string{`image_members[0]: "the other project" is not a project ID (letters, digits, - and _, at most 64)`}},

	// The fatimage provisioner.
	{name: "prov reboot", component: provC, hcl: prov("reboot", `"sometimes"`),
		want: []string{`reboot: "sometimes" is not one of auto, always, never`}},
	{name: "prov reboot_timeout negative", component: provC, hcl: prov("reboot_timeout", `"-1m"`),
		want: []string{"reboot_timeout: must be positive, got -1m0s"}},
	{name: "prov selinux", component: provC, hcl: prov("selinux", `"strict"`),
		want: []string{`selinux: "strict" is not one of enforcing, permissive, disabled, unchanged`}},
	{name: "prov binary_source", component: provC, hcl: prov("binary_source", `"cloud"`),
		want: []string{`binary_source: "cloud" is not one of vm, host`}},
	{name: "prov sha256 malformed", component: provC, hcl: provB(blk("binaries", "name", `"node_exporter"`, "version", `"1.11.1"`, "sha256", `"abc"`)),
		want: []string{"binaries[0] (node_exporter): sha256 must be 64 hex digits"}},
	{name: "prov built-in binary new version without sha256", component: provC, hcl: provB(blk("binaries", "name", `"prometheus"`, "version", `"3.6.0"`), "groups", `["prometheus"]`),
		want: []string{"binaries[0] (prometheus): sha256 is required (version 3.6.0 is not a built-in one)"}},
	{name: "prov grafana dashboard without revision", component: provC, hcl: provB(blk("grafana_dashboards", "id", `4323`)),
		want: []string{"grafana_dashboards[0]: revision is required with id 4323"}},
	{name: "prov grafana dashboard placeholder", component: provC, hcl: provB(blk("grafana_dashboards", "id", `4323`, "revision", `3`, "replacements", `{ "DS/X" = "prometheus" }`)),
		want: []string{`grafana_dashboards[0]: replacements: placeholder "DS/X" must be letters, digits, _ and - (e.g. DS_PROMETHEUS)`}},
	{name: "prov binary version with v", component: provC, hcl: provB(blk("binaries", "name", `"node_exporter"`, "version", `"v1.11.1"`, "sha256", `"`+sha+`"`)),
		want: []string{`binaries[0] (node_exporter): version "v1.11.1" must be like 1.2.3 (no leading v)`}},
	{name: "prov binary url template", component: provC, hcl: provB(blk("binaries", "name", `"foo"`, "version", `"1.0.0"`, "sha256", `"`+sha+`"`, "url", `"{{.Nope}}/foo.tgz"`)),
		want: []string{`binaries[0] (foo): url: template: url:1:2: executing "url" at <.Nope>: map has no entry for key "Nope"`}},
	{name: "prov binary url not http", component: provC, hcl: provB(blk("binaries", "name", `"foo"`, "version", `"1.0.0"`, "sha256", `"`+sha+`"`, "url", `"ftp://@RECHOST@/{{.Name}}.tgz"`)),
		want: []string{`binaries[0] (foo): url "ftp://@RECHOST@/foo.tgz" must be an http(s) URL`}},
	{name: "prov binary given twice", component: provC, hcl: provB(blk("binaries", "name", `"node_exporter"`) + blk("binaries", "name", `"node_exporter"`)),
		want: []string{`binaries[1]: duplicate binary "node_exporter"`}},
	{name: "prov rpm_urls without sha256", component: provC, hcl: provB(blk("rpm_urls", "url", `"http://@RECHOST@/x-1-1.noarch.rpm"`)),
		want: []string{"rpm_urls[0]: sha256 is required: the file is checked before any package work (insecure_skip_checksum = true installs whatever the URL serves)"}},
	{name: "prov rpm_urls relative path", component: provC, hcl: provB(blk("rpm_urls", "url", `"rpms/x.rpm"`, "sha256", `"`+sha+`"`)),
		want: []string{`rpm_urls[0]: url "rpms/x.rpm" must be an http(s) URL`}},
	{name: "prov grafana_plugin_sha256 unknown plugin", component: provC, hcl: prov("grafana_plugins", `["p-panel 1.0.0"]`, "grafana_plugin_sha256", `{ "q-panel" = "`+sha+`" }`),
		want: []string{`grafana_plugin_sha256: "q-panel" is not a plugin of grafana_plugins or the groups' (p-panel)`}},
	{name: "prov duplicate users", component: provC, hcl: provB(blk("users", "name", `"slurm"`, "uid", "202") + blk("users", "name", `"slurm"`, "uid", "203")),
		want: []string{`users[1]: duplicate user "slurm"`}},
	{name: "prov uid of a built-in group user", component: provC, hcl: provB(blk("users", "name", `"munge"`, "uid", "202"), "groups", `["openhpc"]`),
		want: []string{`users[0]: uid 202 already used by "slurm"`}},
	{name: "prov user without uid", component: provC, hcl: provB(blk("users", "name", `"app"`)),
		want: []string{"users[0]: uid is required (a fixed id between 1 and 65533)"}},
	{name: "prov user gid without group", component: provC, hcl: provB(blk("users", "name", `"app"`, "uid", "5000", "gid", "5000")),
		want: []string{"users[0]: gid needs group"}},
	{name: "prov user primary_group without group", component: provC, hcl: provB(blk("users", "name", `"app"`, "uid", "5000", "primary_group", "false")),
		want: []string{"users[0]: primary_group = false needs group (the group made on its own)"}},
	{name: "prov gpg key path relative", component: provC, hcl: provB(blk("gpg_keys", "path", `"RPM-GPG-KEY-EPEL-9"`)),
		want: []string{`gpg_keys[0]: path "RPM-GPG-KEY-EPEL-9" must be absolute`}},
	{name: "prov gpg key not armored", component: provC, hcl: provB(blk("gpg_keys", "path", `"/etc/pki/rpm-gpg/K"`, "key", `"junk"`)),
		want: []string{"gpg_keys[0]: key must be an armored PGP public key block"}},
	{name: "prov gpg builtin unknown", component: provC, hcl: provB(blk("gpg_keys", "builtin", `"rstudio"`)),
		want: []string{`gpg_keys[0]: builtin "rstudio" is not a built-in key (built-in keys: RStudio,`}},
	{name: "prov files source missing", component: provC, hcl: provB(blk("files", "source", `"@DIR@/nope"`, "destination", `"/etc/nope"`)),
		want: []string{"files[0]: source: stat @DIR@/nope: no such file or directory"}},
	{name: "prov files source empty", component: provC, hcl: provB(blk("files", "source", `""`, "destination", `"/etc/x"`)),
		want: []string{"files[0]: one of source, content, directory = true or symlink is required"}},
	{name: "prov files source and content", component: provC, hcl: provB(blk("files", "source", `"@DIR@/t.pkr.hcl"`, "content", `"x"`, "destination", `"/etc/x"`)),
		want: []string{"files[0]: source, content, directory = true and symlink exclude each other"}},
	{name: "prov files symlink relative", component: provC, hcl: provB(blk("files", "symlink", `"bin/websockify"`, "destination", `"/opt/websockify/run"`)),
		want: []string{`files[0]: symlink "bin/websockify" must be an absolute, clean path`}},
	{name: "prov extra group without its vendor repository", component: provC, hcl: prov("groups", `["doca"]`),
		want: []string{`group "doca" needs the vendor repository "doca" (NVIDIA DOCA 3.2.3, https://linux.mellanox.com/public/repo/doca/3.2.3/rhel9/x86_64/), which is not configured: add a repos entry with repo_name = "doca"`}},
	{name: "prov gateway without appliance_dir", component: provC, hcl: prov("groups", `["gateway"]`),
		want: []string{`group "gateway": appliance_dir is required: the group places playbooks and roles from the site's appliance checkout`}},
	{name: "prov compute_init with an incomplete checkout", component: provC, hcl: prov("groups", `["compute_init"]`, "appliance_dir", `"@DIR@"`),
		want: []string{`group "compute_init": files[6]: source: stat @DIR@/ansible/roles/basic_users: no such file or directory`}},
	{name: "prov files destination relative", component: provC, hcl: provB(blk("files", "source", `"@DIR@/t.pkr.hcl"`, "destination", `"etc/x"`)),
		want: []string{`files[0]: destination "etc/x" must be absolute`}},
	{name: "prov unknown group", component: provC, hcl: prov("groups", `["nfs", "nosuch"]`),
		want: []string{`groups: unknown group "nosuch" (known groups: `}},
	{name: "prov groups typo", component: provC, hcl: prov("groups", `["nfs", "grafanna"]`),
		want: []string{`groups[1]: unknown group "grafanna": did you mean "grafana"?`}},
	{name: "prov node role without an inventory", component: provC, hcl: prov("groups", `["nfs", "compute"]`),
		want: []string{`groups[1]: "compute" alone is not the appliance's compute image, which its inventories' [x:children] decide; set appliance_dir to resolve it from the checkout's common and site inventories, or use inventory mode (inventory = [<common>, <site>, <environment> inventory] with inventory_groups = "compute"), or groups = ["fatimage"] for the appliance's fat image`}},
	{name: "prov inventory_groups typo", component: provC, hcl: prov("inventory", `["`+applianceEnv+`/common/inventory"]`, "inventory_groups", `"fatimge"`),
		want: []string{`inventory_groups: unknown group "fatimge": did you mean "fatimage"?`}},
	{name: "prov inventory child typo", component: provC, hcl: prov("inventory", `["@DIR@/groups"]`),
		files: map[string]string{"groups": "[grafana:children]\ncontrl\n"},
		want:  []string{`inventory: unknown group "contrl": did you mean "control"?`}},
	{name: "prov inventory loop", component: provC, hcl: prov("inventory", `["@DIR@/groups"]`),
		files: map[string]string{"groups": "[a:children]\nb\n[b:children]\na\n"},
		want:  []string{"inventory[0]: groups form a loop: a -> b -> a"}},
	{name: "prov inventory missing", component: provC, hcl: prov("inventory", `["@DIR@/nope"]`),
		want: []string{"inventory[0]: stat @DIR@/nope: no such file or directory"}},
	{name: "prov unknown cleanup step", component: provC, hcl: prov("skip_cleanup_steps", `["everything"]`),
		want: []string{`skip_cleanup_steps[0]: unknown step "everything" (known: `}},
	{name: "prov grafana_plugins without version", component: provC, hcl: prov("grafana_plugins", `["grafana-opensearch-datasource"]`),
		want: []string{`grafana_plugins[0]: "grafana-opensearch-datasource" must be "<plugin id> <version>"`}},
	{name: "prov login_home relative", component: provC, hcl: prov("login_home", `"var/lib/rocky"`),
		want: []string{`login_home: "var/lib/rocky" must be absolute`}},
	{name: "prov Ark repo without credentials", component: provC,
		hcl:  prov("repos", `[{ name = "baseos", repo_file = "rocky", repo_name = "baseos", baseurl = "https://ark.stackhpc.com/pulp/content/rocky/9.6/BaseOS/x86_64/os/20251106T211545", gpgcheck = true }]`),
		want: []string{"repos[0]: https://ark.stackhpc.com/pulp/content/rocky/9.6/BaseOS/x86_64/os/20251106T211545 needs credentials; set repo_username and repo_password (or ARK_USERNAME and ARK_PASSWORD)"}},
	{name: "prov repo_username without repo_password", component: provC, hcl: prov("repo_username", `"me"`),
		want: []string{"repo_password: must be set when repo_username is set (or set ARK_PASSWORD)"}},
	{name: "prov repo_password without repo_username", component: provC, hcl: prov(), env: []string{"ARK_PASSWORD=s3cret"},
		want:    []string{"repo_username: must be set when repo_password is set (or set ARK_USERNAME)"},
		notWant: []string{"s3cret"}},
	{name: "prov repo baseurl scheme", component: provC, hcl: prov("repos", `[{ name = "baseos", repo_file = "rocky", repo_name = "baseos", baseurl = "ftp://@RECHOST@/baseos" }]`),
		want: []string{`repos[0]: baseurl "ftp://@RECHOST@/baseos" must start with http://, https:// or file://`}},
	{name: "prov repo enabled not a bool", component: provC, hcl: prov("repos", `[{ name = "baseos", repo_file = "rocky", repo_name = "baseos", baseurl = "@REC@/baseos", enabled = "maybe" }]`),
		want: []string{`repos[0]: cannot parse 'enabled' as bool: strconv.ParseBool: parsing "maybe": invalid syntax`}},
	{name: "prov repo priority", component: provC, hcl: prov("repos", `[{ name = "baseos", repo_file = "rocky", repo_name = "baseos", baseurl = "@REC@/baseos", priority = 120 }]`),
		want: []string{"repos[0]: priority 120 must be between 1 and 99"}},
	{name: "prov module stream", component: provC, hcl: prov("module_streams", `["nodejs 22"]`),
		want: []string{`module_streams[0]: "nodejs 22" must be name:stream`}},
	{name: "prov package spec", component: provC, hcl: prov("packages", `["-rf"]`),
		want: []string{`packages[0]: "-rf" is not a valid package name or spec`}},
	{name: "prov release_base_url not http", component: provC, hcl: prov("release_base_url", `"ftp://@RECHOST@/releases"`),
		want: []string{`release_base_url "ftp://@RECHOST@/releases" must be an http(s) URL`}},
	{name: "prov execute_command without path", component: provC, hcl: prov("execute_command", `"sudo sh"`),
		want: []string{"execute_command: must contain {{.Path}}"}},
	{name: "prov remote_folder relative", component: provC, hcl: prov("remote_folder", `"tmp"`),
		want: []string{`remote_folder: "tmp" must be absolute`}},

	// Issue #26: credentials in URLs (never shown), credentials with
	// control characters, destructive paths, modes, bounds and specs.
	{name: "prov release_base_url with credentials", component: provC, hcl: prov("release_base_url", `"http://user:S3cret-rel@@RECHOST@/releases"`),
		want:    []string{`release_base_url "http://@RECHOST@/releases" must not carry credentials (user info before @)`},
		notWant: []string{"S3cret-rel"}},
	{name: "prov binaries url with credentials", component: provC, hcl: provB(blk("binaries", "name", `"foo"`, "version", `"1.0.0"`, "sha256", `"`+sha+`"`, "url", `"http://user:S3cret-bin@@RECHOST@/{{.Name}}.tgz"`)),
		want:    []string{`binaries[0] (foo): url "http://@RECHOST@/foo.tgz" must not carry credentials`},
		notWant: []string{"S3cret-bin"}},
	{name: "prov git_base_url with credentials", component: provC, hcl: prov("git_base_url", `"https://tok-S3cret-git@@RECHOST@"`),
		want:    []string{`git_base_url "https://@RECHOST@" must not carry credentials`},
		notWant: []string{"S3cret-git"}},
	{name: "prov github_releases_url with credentials", component: provC, hcl: prov("github_releases_url", `"https://u:S3cret-gh@@RECHOST@"`),
		want: []string{`github_releases_url "https://@RECHOST@" must not carry credentials`}, notWant: []string{"S3cret-gh"}},
	{name: "prov python_index_url with credentials", component: provC, hcl: prov("python_index_url", `"https://u:S3cret-py@@RECHOST@/simple"`),
		want: []string{`python_index_url "https://@RECHOST@/simple" must not carry credentials`}, notWant: []string{"S3cret-py"}},
	{name: "prov python_index_url plain http without python_index_insecure", component: provC, hcl: prov("python_index_url", `"http://@RECHOST@/simple"`),
		want: []string{`python_index_url http://@RECHOST@/simple is plain http: pip would trust the host (--trusted-host)`, `set python_index_insecure = true to accept it`}},
	{name: "prov python_envs extra_index_url plain http without python_index_insecure", component: provC,
		hcl:  provB(blk("python_envs", "path", `"/opt/v"`, "extra_index_url", `"http://@RECHOST@/simple"`, "requirements", `["a==1"]`)),
		want: []string{`python_envs[0]: extra_index_url http://@RECHOST@/simple is plain http`}},
	{name: "prov rstudio_download_url with credentials", component: provC, hcl: prov("rstudio_download_url", `"https://u:S3cret-rs@@RECHOST@"`),
		want: []string{`rstudio_download_url "https://@RECHOST@" must not carry credentials`}, notWant: []string{"S3cret-rs"}},
	{name: "prov grafana_plugin_url with credentials", component: provC, hcl: prov("grafana_plugin_url", `"https://u:S3cret-gp@@RECHOST@/api/plugins"`),
		want: []string{`grafana_plugin_url "https://@RECHOST@/api/plugins" must not carry credentials`}, notWant: []string{"S3cret-gp"}},
	{name: "prov grafana_dashboards_url with credentials", component: provC, hcl: prov("grafana_dashboards_url", `"https://u:S3cret-gd@@RECHOST@"`),
		want: []string{`grafana_dashboards_url "https://@RECHOST@" must not carry credentials`}, notWant: []string{"S3cret-gd"}},
	{name: "prov netlib_url with credentials", component: provC, hcl: prov("netlib_url", `"https://u:S3cret-nl@@RECHOST@/hpl"`),
		want: []string{`netlib_url "https://@RECHOST@/hpl" must not carry credentials`}, notWant: []string{"S3cret-nl"}},
	{name: "prov container_registry with credentials", component: provC, hcl: prov("container_registry", `"u:S3cret-cr@@RECHOST@"`),
		want: []string{`container_registry "xxxxx@@RECHOST@" must be host or host:port`}, notWant: []string{"S3cret-cr"}},
	{name: "prov downloads url with credentials", component: provC, hcl: provB(blk("downloads", "url", `"https://u:S3cret-dl@@RECHOST@/f"`, "sha256", `"`+sha+`"`, "destination", `"/opt/f"`)),
		want: []string{`downloads[0]: url "https://@RECHOST@/f" must not carry credentials`}, notWant: []string{"S3cret-dl"}},
	{name: "prov rpm_urls url with credentials", component: provC, hcl: provB(blk("rpm_urls", "url", `"https://u:S3cret-rpm@@RECHOST@/x.rpm"`, "sha256", `"`+sha+`"`)),
		want: []string{`rpm_urls[0]: url "https://@RECHOST@/x.rpm" must not carry credentials`}, notWant: []string{"S3cret-rpm"}},
	{name: "prov git_checkouts repo with credentials", component: provC, hcl: provB(blk("git_checkouts", "repo", `"https://u:S3cret-gc@@RECHOST@/a.git"`, "tag", `"v1"`, "destination", `"/opt/a"`)),
		want: []string{`git_checkouts[0]: repo "https://@RECHOST@/a.git" must not carry credentials`}, notWant: []string{"S3cret-gc"}},
	{name: "prov python_envs index_url with credentials", component: provC, hcl: provB(blk("python_envs", "path", `"/opt/v"`, "index_url", `"https://u:S3cret-pi@@RECHOST@/simple"`, "requirements", `["a==1"]`)),
		want: []string{`python_envs[0]: index_url "https://@RECHOST@/simple" must not carry credentials`}, notWant: []string{"S3cret-pi"}},
	{name: "prov repos baseurl with credentials", component: provC, hcl: prov("repos", `[{ name = "baseos", repo_file = "rocky", repo_name = "baseos", baseurl = "http://u:S3cret-repo@@RECHOST@/baseos" }]`),
		want: []string{`repos[0]: baseurl "http://@RECHOST@/baseos" must not carry credentials (user info before @): they would show in the output and in command lines on the VM; set repo_username and repo_password`}, notWant: []string{"S3cret-repo"}},
	{name: "prov repo_password with a newline", component: provC, hcl: prov("repo_username", `"me"`, "repo_password", `"pw\nproxy = http://evil"`),
		want: []string{"repo_password: must not contain control characters"}},
	{name: "prov registry password with a newline", component: provC, hcl: provB(blk("container_registries", "host", `"r.example"`, "username", `"u"`, "password", `"pw\nurl = http://evil"`)),
		want: []string{"container_registries[0]: password: must not contain control characters"}},
	{name: "prov files directory source at /", component: provC, hcl: provB(blk("files", "source", `"@DIR@"`, "destination", `"/"`)),
		want: []string{`files[0]: destination "/" is the root directory: everything in the image would be replaced or taken over`}},
	{name: "prov files directory source at /etc", component: provC, hcl: provB(blk("files", "source", `"@DIR@"`, "destination", `"/etc"`)),
		want: []string{`files[0]: destination "/etc" is a system directory: it would be replaced, removed or taken over as a whole`}},
	{name: "prov files destination with ..", component: provC, hcl: provB(blk("files", "content", `"x"`, "destination", `"/a/../b"`)),
		want: []string{`files[0]: destination "/a/../b" must be a clean path (/b: no //, . or .. segment, no trailing /)`}},
	{name: "prov files destination with //", component: provC, hcl: provB(blk("files", "content", `"x"`, "destination", `"//etc/x"`)),
		want: []string{`files[0]: destination "//etc/x" must be a clean path (/etc/x:`}},
	{name: "prov files destination with a trailing /", component: provC, hcl: provB(blk("files", "content", `"x"`, "destination", `"/etc/x/"`)),
		want: []string{`files[0]: destination "/etc/x/" must be a clean path (/etc/x:`}},
	{name: "prov files destination twice", component: provC, hcl: provB(blk("files", "content", `"a"`, "destination", `"/etc/x"`) + blk("files", "content", `"b"`, "destination", `"/etc/./x"`)),
		want: []string{"files[1]: destination /etc/x is also files[0]'s"}},
	{name: "prov files mode 7777", component: provC, hcl: provB(blk("files", "content", `"x"`, "destination", `"/etc/x"`, "mode", `"7777"`)),
		want: []string{`files[0]: mode "7777" sets setuid, setgid or sticky bits (above 0777), which the provisioner does not give`}},
	{name: "prov files system directory world-writable", component: provC, hcl: provB(blk("files", "directory", "true", "destination", `"/etc"`, "mode", `"0777"`)),
		want: []string{`files[0]: mode "0777" lets group or others write the system directory /etc`}},
	{name: "prov gpg key at /etc/sudoers", component: provC, hcl: provB(blk("gpg_keys", "path", `"/etc/sudoers"`)),
		want: []string{`gpg_keys[0]: path "/etc/sudoers" must be a file in /etc/pki/rpm-gpg/`}},
	{name: "prov git checkout at /etc", component: provC, hcl: provB(blk("git_checkouts", "repo", `"https://@RECHOST@/a.git"`, "tag", `"v1"`, "destination", `"/etc"`)),
		want: []string{`git_checkouts[0]: destination "/etc" is a system directory: it would be replaced, removed or taken over as a whole; use a directory of its own below it (a checkout replaces what is there)`}},
	{name: "prov git checkout at /usr/local", component: provC, hcl: provB(blk("git_checkouts", "repo", `"https://@RECHOST@/a.git"`, "tag", `"v1"`, "destination", `"/usr/local"`)),
		want: []string{`git_checkouts[0]: destination "/usr/local" is a system directory`}},
	{name: "prov download extracted to /usr", component: provC, hcl: provB(blk("downloads", "url", `"https://@RECHOST@/f.tgz"`, "sha256", `"`+sha+`"`, "destination", `"/usr"`, "extract", "true")),
		want: []string{`downloads[0]: destination "/usr" is a system directory: it would be replaced, removed or taken over as a whole; use a directory of its own below it (an archive may add to it only with members, owned by root)`}},
	{name: "prov download strip_components huge", component: provC, hcl: provB(blk("downloads", "url", `"https://@RECHOST@/f.tgz"`, "sha256", `"`+sha+`"`, "destination", `"/opt/f"`, "extract", "true", "strip_components", "2147483647")),
		want: []string{"downloads[0]: strip_components 2147483647 must be between 0 and 16"}},
	{name: "prov venv at /usr", component: provC, hcl: provB(blk("python_envs", "path", `"/usr"`, "requirements", `["a==1"]`)),
		want: []string{`python_envs[0]: path "/usr" is a system directory`}},
	{name: "prov user home /etc created", component: provC, hcl: provB(blk("users", "name", `"app"`, "uid", "5000", "home", `"/etc"`, "create_home", "true")),
		want: []string{`users[0]: home "/etc" is a system directory: it would be replaced, removed or taken over as a whole; use a directory of its own below it (create_home makes it the user's)`}},
	{name: "prov login_home /etc", component: provC, hcl: prov("login_home", `"/etc"`),
		want: []string{`login_home: "/etc" is a system directory: it would be replaced, removed or taken over as a whole; use a directory of its own below it (the login user's home, its own directory)`}},
	{name: "prov remote_folder /", component: provC, hcl: prov("remote_folder", `"/"`),
		want: []string{`remote_folder: "/" is the root directory`}},
	{name: "prov remote_folder on /run", component: provC, hcl: prov("remote_folder", `"/run/build"`),
		want: []string{`remote_folder: "/run/build" is under /run, a runtime filesystem whose content never reaches the image`}},
	{name: "prov binaries destination /", component: provC, hcl: provB(blk("binaries", "name", `"foo"`, "version", `"1.0.0"`, "sha256", `"`+sha+`"`, "url", `"@REC@/foo.tgz"`, "destination", `"/"`)),
		want: []string{`binaries[0] (foo): destination "/" is the root directory`}},
	{name: "prov reboot_timeout 1ns", component: provC, hcl: prov("reboot_timeout", `"1ns"`),
		want: []string{"reboot_timeout: 1ns is shorter than 1m0s: no VM reboots that fast"}},
	{name: "prov rpm_urls url not an rpm", component: provC, hcl: provB(blk("rpm_urls", "url", `"@REC@/download?id=3"`, "sha256", `"`+sha+`"`)),
		want: []string{`rpm_urls[0]: url "@REC@/download?id=3" does not name an .rpm file`}},
	{name: "prov inventory /etc/passwd", component: provC, hcl: prov("inventory", `["/etc/passwd"]`),
		want: []string{"inventory[0]: /etc/passwd:1: not a host name, group or section header: not an Ansible INI inventory"}},
	{name: "prov packages *", component: provC, hcl: prov("packages", `["*"]`),
		want: []string{`packages[0]: "*" matches every package`}},
	{name: "prov packages glob", component: provC, hcl: prov("packages", `["python3-*"]`),
		want: []string{`packages[0]: "python3-*" is a glob: name the packages`}},
	{name: "prov remove_packages *", component: provC, hcl: prov("remove_packages", `["*"]`),
		want: []string{`remove_packages[0]: "*" matches every package`}},
	{name: "prov remove_packages glob", component: provC, hcl: prov("remove_packages", `["kernel*"]`),
		want: []string{`remove_packages[0]: "kernel*" is a glob`}},
	{name: "prov update_exclude *", component: provC, hcl: prov("update_exclude", `["*"]`),
		want: []string{`update_exclude[0]: "*" matches every package`}},

	// Refused by packer itself when decoding the HCL, before the plugin
	// sees the configuration.
	{name: "hcl ds unknown argument", component: hclC, hcl: ds("", "no_such_option", "true"),
		want: []string{`An argument named "no_such_option" is not expected here.`}},
	{name: "hcl ds concurrency not a number", component: hclC, hcl: ds("", "concurrency", `"many"`),
		want: []string{`Inappropriate value for attribute "concurrency": a number is required.`}},
	{name: "hcl builder unknown argument", component: hclC, hcl: src("flavour", `"m1.small"`),
		want: []string{`An argument named "flavour" is not expected here.`}},
	{name: "hcl prov groups not a list", component: hclC, hcl: prov("groups", `{ a = 1 }`),
		want: []string{`Inappropriate value for attribute "groups": list of string required.`}},
}

// applianceEnv is the checked-in appliance inventory layout's
// environments directory, absolute (templates run in a temporary dir).
var applianceEnv = func() string {
	d, err := filepath.Abs("../appliance/environments")
	if err != nil {
		panic(err)
	}
	return d
}()

// valid are control templates `packer validate` must accept, with the same
// environment and no network call either.
var valid = []tcase{
	{name: "valid data source", component: dsC,
		hcl: ds("\n  repo {\n    name = \"baseos\"\n    path = \"rocky/9.6/BaseOS/x86_64/os\"\n    repo_file = \"rocky\"\n  }\n  repo {\n    name = \"epel\"\n    path = \"epel/9/Everything/x86_64\"\n    content_url = \"@REC@/other\"\n  }\n",
			"timestamps_file", `"@DIR@/ts.yml"`, "mode", `"not_after"`, "not_after", `"2025-06-01T00:00:00Z"`),
		files: map[string]string{"ts.yml": "dnf_repos_default:\n  appstream:\n    '9.6':\n      pulp_path: rocky/9.6/AppStream/x86_64/os\n      pulp_timestamp: 20250515T013913\n      repo_file: rocky\n"}},
	{name: "valid data source with site_pulp", component: dsC,
		hcl: ds("\n  repo {\n    name = \"baseos\"\n    path = \"rocky/9.6/BaseOS/x86_64/os\"\n  }\n  site_pulp {\n    url = \"@REC@\"\n    username = \"u\"\n    password = \"Site-Pw-x\"\n    policy = \"immediate\"\n    task_timeout = \"2h\"\n  }\n")},
	{name: "valid builder", component: srcC, hcl: src("use_blockstorage_volume", "true", "volume_size", "20", "image_disk_format", `"raw"`)},
	{name: "valid builder from clouds.yaml", component: srcC, hcl: src("cloud", `"lab"`),
		env:   []string{"OS_AUTH_URL=", "OS_USERNAME=", "OS_PASSWORD=", "OS_CLIENT_CONFIG_FILE=@DIR@/clouds.yaml"},
		files: map[string]string{"clouds.yaml": "clouds:\n  lab:\n    auth:\n      auth_url: @REC@/v3\n      username: u\n      password: p\n      project_name: p\n      user_domain_name: Default\n    region_name: RegionOne\n"}},
	// Horizon's clouds.yaml has no password: CI injects OS_PASSWORD.
	{name: "valid builder from Horizon's clouds.yaml and OS_PASSWORD", component: srcC, hcl: src(),
		env:     []string{"OS_AUTH_URL=", "OS_USERNAME=", "OS_PASSWORD=Ci-Pw-x", "OS_CLOUD=openstack", "OS_CLIENT_CONFIG_FILE=@DIR@/clouds.yaml"},
		files:   map[string]string{"clouds.yaml": "clouds:\n  openstack:\n    auth:\n      auth_url: @REC@/v3\n      username: u\n      project_id: 0123456789abcdef0123456789abcdef\n      project_name: p\n      user_domain_name: Users\n      project_domain_id: projects\n    region_name: RegionOne\n    interface: public\n    identity_api_version: 3\n"},
		notWant: []string{"Ci-Pw-x"}},
	// Templates the official builder validates; those probably wrong warn.
	{name: "valid builder with filter visibility protected", component: srcC,
		hcl:  src("source_image_name", "-", "source_image_filter", "block:    filters {\n      name = \"Rocky-9\"\n      visibility = \"protected\"\n    }\n    most_recent = true\n"),
		want: []string{`source_image_filter.filters.visibility: "protected" is not one of public, private, shared, community; ignored`}},
	{name: "valid builder with user_data and user_data_file", component: srcC,
		hcl: src("user_data", `"#cloud-config"`, "user_data_file", `"@DIR@/ud.yaml"`), files: map[string]string{"ud.yaml": "#cloud-config\n"},
		want: []string{"user_data: ignored because user_data_file is set"}},
	{name: "valid builder with image_auto_accept_members alone", component: srcC, hcl: src("image_auto_accept_members", "true"),
		want: []string{"image_auto_accept_members: ignored without image_members"}},
	{name: "valid builder with image_members on a private image", component: srcC, hcl: src("image_visibility", `"private"`, "image_members", `["p1"]`),
		want: []string{`image_members: Glance gives members only to shared images, and image_visibility is "private"`}},
	{name: "valid builder with source_image_name and most_recent", component: srcC, hcl: src("source_image_filter", "block:    most_recent = true\n")},
	{name: "valid provisioner", component: provC,
		hcl: provB(blk("users", "name", `"app"`, "uid", "5000", "group", `"app"`, "gid", "5000")+
			blk("files", "source", `"@DIR@/t.pkr.hcl"`, "destination", `"/etc/t.pkr.hcl"`, "mode", `"0640"`)+
			blk("gpg_keys", "path", `"/etc/pki/rpm-gpg/RPM-GPG-KEY-EPEL-9"`)+
			blk("binaries", "name", `"node_exporter"`, "version", `"1.11.1"`, "sha256", `"`+sha+`"`),
			"groups", `["openhpc", "prometheus", "grafana"]`, "binary_source", `"host"`, "grafana_plugins", `["grafana-opensearch-datasource 2.8.1"]`,
			"module_streams", `["nodejs:22"]`, "login_home", `"/var/lib/rocky"`, "skip_cleanup_steps", `[]`)},
	// What issue #26's checks must still let through: a group with a
	// space, a system directory's owner and mode set as root, an archive's
	// named member added to /usr/bin, a key in the keys' directory.
	{name: "valid provisioner system paths", component: provC,
		hcl: provB(blk("files", "directory", "true", "destination", `"/etc"`, "mode", `"0755"`)+
			blk("downloads", "url", `"@REC@/helm.tgz"`, "sha256", `"`+sha+`"`, "destination", `"/usr/bin"`, "extract", "true", "members", `["linux-amd64/helm"]`)+
			blk("gpg_keys", "path", `"/etc/pki/rpm-gpg/RPM-GPG-KEY-EPEL-9"`),
			"packages", `["@Development Tools"]`, "update_exclude", `["kernel*"]`)},
	// The checked-in appliance layout, layered as the appliance layers it,
	// with a site group of its own passed silently.
	{name: "valid provisioner with an appliance inventory", component: provC,
		hcl: prov("inventory", `["`+applianceEnv+`/common/inventory", "`+applianceEnv+`/site/inventory", "`+applianceEnv+`/fatsite/inventory"]`,
			"inventory_groups", `"fatimage,site_only"`, "appliance_dir", `"`+filepath.Dir(applianceEnv)+`"`)},
	// All three together, as users write them: the provisioner takes the
	// data source's (unknown, as it is not executed) repos.
	{name: "valid all three", component: "all",
		hcl: header + `
data "fatimage-ark" "rocky" {
  content_url = "@REC@/pulp/content"
  username    = "me"
  password    = "s3cret"
  os_version  = "9.6"
  repo {
    name      = "baseos"
    path      = "rocky/9.6/BaseOS/x86_64/os"
    repo_file = "rocky"
  }
}

source "fatimage-openstack" "x" {
  source_image_name   = "Rocky-9-GenericCloud-Base-9.6"
  flavor              = "m1.small"
  floating_ip_network = "public"
  ssh_username        = "rocky"
  image_name          = "fat-${data.fatimage-ark.rocky.snapshot_id}"
}

build {
  sources = ["source.fatimage-openstack.x"]

  provisioner "fatimage" {
    repos            = data.fatimage-ark.rocky.repos
    repo_username    = "me"
    repo_password    = "s3cret"
    groups           = ["openhpc", "node_exporter"]
    release_base_url = "@REC@/releases"
  }
}
`},
}

// run writes the case's files into a new directory and runs
// `packer validate .` there.
func run(t *testing.T, p *packertest.Packer, n *network, tc tcase, args ...string) (packertest.Result, string) {
	t.Helper()
	dir := t.TempDir()
	subst := n.subst(dir)
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(subst(body)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("t.pkr.hcl", tc.hcl)
	for name, body := range tc.files {
		write(name, body)
	}
	env := n.env(dir)
	for _, e := range tc.env {
		env = append(env, subst(e))
	}
	r := p.Run(t, dir, env, append(append([]string{"validate"}, args...), ".")...)
	return r, dir
}

func TestBadInput(t *testing.T) {
	p := packertest.Setup(t)
	n := newNetwork(t)
	start := time.Now()

	perComponent := map[string]int{}
	for _, tc := range cases {
		perComponent[tc.component]++
	}
	if plugin := len(cases) - perComponent[hclC]; plugin < 40 {
		t.Fatalf("%d plugin-level cases, want at least 40", plugin)
	}

	t.Run("cases", func(t *testing.T) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				r, dir := run(t, p, n, tc)
				// Packer wraps messages at about 80 columns.
				out := strings.Join(strings.Fields(r.Output()), " ")
				t.Logf("exit %d: %s", r.ExitCode, out)
				if r.ExitCode == 0 {
					t.Fatalf("packer validate accepted the template:\n%s", out)
				}
				for _, w := range tc.want {
					w = strings.Join(strings.Fields(n.subst(dir)(w)), " ")
					if !strings.Contains(out, w) {
						t.Errorf("output lacks %q:\n%s", w, out)
					}
				}
				for _, w := range tc.notWant {
					if strings.Contains(out, w) {
						t.Errorf("output contains %q:\n%s", w, out)
					}
				}
			})
		}
		for _, tc := range valid {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				r, _ := run(t, p, n, tc)
				if r.ExitCode != 0 || !strings.Contains(r.Output(), "The configuration is valid.") {
					t.Fatalf("packer validate refused a valid template (exit %d):\n%s", r.ExitCode, r.Output())
				}
				for _, w := range tc.want {
					if !strings.Contains(r.Output(), w) {
						t.Errorf("output lacks the warning %q:\n%s", w, r.Output())
					}
				}
				for _, w := range tc.notWant {
					if strings.Contains(r.Output(), w) {
						t.Errorf("output contains %q:\n%s", w, r.Output())
					}
				}
				if strings.Contains(r.Output(), "s3cret") {
					t.Errorf("output shows the password:\n%s", r.Output())
				}
			})
		}
	})
	n.requireQuiet(t)
	figures.Record(t, "badinput", []string{"bad inputs tried", "refused at packer validate naming the field", "valid controls accepted", "network calls"},
		fmt.Sprint(len(cases)), fmt.Sprintf("all %d", len(cases)), fmt.Sprint(len(valid)), "0")
	t.Logf("%d invalid templates (%v) and %d valid ones validated in %s with no network call",
		len(cases), perComponent, len(valid), time.Since(start).Round(100*time.Millisecond))
}

// TestRecordersObserve checks the harness can see a call: with
// -evaluate-datasources (which the cases above never pass) the data source
// runs and reaches both the recording server and, for a non-local host,
// the proxy. So the zero counts above mean no call, not a blind recorder.
func TestRecordersObserve(t *testing.T) {
	p := packertest.Setup(t)
	n := newNetwork(t)
	tc := tcase{hcl: ds("\n  repo {\n    name = \"baseos\"\n    path = \"rocky/9.6/BaseOS/x86_64/os\"\n  }\n  repo {\n    name = \"epel\"\n    path = \"epel/9/Everything/x86_64\"\n    content_url = \"http://ark.invalid/pulp/content\"\n  }\n",
		"verify", "false", "timeout", `"5s"`)}
	r, _ := run(t, p, n, tc, "-evaluate-datasources")
	if r.ExitCode == 0 {
		t.Fatalf("the data source resolved against 404s:\n%s", r.Output())
	}
	for name, rec := range map[string]*recorder{"recording server": n.rec, "proxy": n.proxy} {
		if conns, reqs := rec.seen(); conns == 0 || len(reqs) == 0 {
			t.Errorf("the %s saw no call (%d connections); the no-network checks would be blind:\n%s", name, conns, r.Output())
		}
	}
}
