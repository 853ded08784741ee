// Package gpgkeys holds the public keys of the appliance's standard
// repositories (image contract, section 3) and of the optional groups'
// vendors, so that a site's template needs no key files of its own.
//
// The keys are public data, vendored as the vendors publish them (the
// appliance embeds the same blocks). Each one's fingerprint is pinned in
// the table below and checked by the unit tests against the block, so a
// changed or corrupted file fails the tests instead of shipping.
package gpgkeys

import (
	"embed"
	"fmt"
	"sort"
	"strings"
)

//go:embed keys
var keyFiles embed.FS

// Dir is where rpm keeps repository keys; every built-in key lands there.
const Dir = "/etc/pki/rpm-gpg/"

// Key is one built-in key for one OS major version.
type Key struct {
	// Name is the key's name in gpg_keys' `builtin`: the appliance's
	// dnf_repos key (epel, openhpc, ceph, cernvmfs, TurboVNC,
	// ondemand-web) or an optional group's vendor (RStudio, ceph-release).
	Name string
	// Major is the OS major version the key is for ("8" or "9").
	Major string
	// Path is the file the appliance writes, under Dir.
	Path string
	// Fingerprint is the primary key's v4 fingerprint, upper-case hex
	// without spaces, as the contract sheet lists it.
	Fingerprint string
	// file is the vendored block under keys/.
	file string
}

// Armored is the key's armored public key block.
func (k Key) Armored() []byte {
	data, err := keyFiles.ReadFile("keys/" + k.file)
	if err != nil {
		// the table names only embedded files (TestTable)
		panic(fmt.Sprintf("gpgkeys: %s: %v", k.file, err))
	}
	return data
}

// ID is the short key id rpm names the imported key by
// (gpg-pubkey-<id>): the fingerprint's last 8 hex digits, lower case.
func (k Key) ID() string { return strings.ToLower(k.Fingerprint[len(k.Fingerprint)-8:]) }

// both is a key that is the same file for RL8 and RL9.
func both(name, file, fpr string) []Key {
	return []Key{{name, "8", Dir + file, fpr, file}, {name, "9", Dir + file, fpr, file}}
}

// table is every built-in key. Sources and fingerprints: contract sheet
// section 3 (the appliance's roles/dnf_repos/defaults/main.yml and
// roles/openondemand/defaults/main.yml); ceph-release is
// https://download.ceph.com/keys/release.asc (the manila group's key).
var table = concat(
	[]Key{
		{"epel", "8", Dir + "RPM-GPG-KEY-EPEL-8", "94E279EB8D8F25B21810ADF121EA45AB2F86D6A1", "RPM-GPG-KEY-EPEL-8"},
		{"epel", "9", Dir + "RPM-GPG-KEY-EPEL-9", "FF8AD1344597106ECE813B918A3872BF3228467C", "RPM-GPG-KEY-EPEL-9"},
		{"openhpc", "8", Dir + "RPM-GPG-KEY-OpenHPC-2", "5392744D3C543ED5784765E68A306019DA565C6C", "RPM-GPG-KEY-OpenHPC-2"},
		{"openhpc", "9", Dir + "RPM-GPG-KEY-OpenHPC-3", "6E19BE11D9A082C00A7DB41A7AC05F0940A90CC8", "RPM-GPG-KEY-OpenHPC-3"},
		// one path, two keys: OnDemand signs its el9 packages with a newer key
		{"ondemand-web", "8", Dir + "RPM-GPG-KEY-ondemand", "FE143EA1CB378B569BBF7C544B72FE2B92D31755", "RPM-GPG-KEY-ondemand.el8"},
		{"ondemand-web", "9", Dir + "RPM-GPG-KEY-ondemand", "3D4CD7E7D4BC45263AC11388C2ADB19AFD775498", "RPM-GPG-KEY-ondemand.el9"},
	},
	both("ceph", "RPM-GPG-KEY-centos-storage-sig", "74129C0B173B071A3775951AD4A2E50BE451E5B5"),
	both("cernvmfs", "RPM-GPG-KEY-CernVM", "70B9890488208E315ED45208230D389D8AE45CE7"),
	both("TurboVNC", "RPM-GPG-KEY-TurboVNC", "AE1A7BA4EFFF9A9987E1474C4BACCAB36E7FE9A1"),
	both("RStudio", "RPM-GPG-KEY-RStudio", "8B65E5A107BBEFE3BA99C59751C0B5BB19F92D60"),
	[]Key{
		// the appliance imports it from its URL without writing a file;
		// we write it where rpm keys live, under the name ceph.com gives it
		{"ceph-release", "8", Dir + "RPM-GPG-KEY-ceph-release", "08B73419AC32B4E966C1A330E84AC2C0460F3994", "ceph-release.asc"},
		{"ceph-release", "9", Dir + "RPM-GPG-KEY-ceph-release", "08B73419AC32B4E966C1A330E84AC2C0460F3994", "ceph-release.asc"},
	},
)

func concat(parts ...[]Key) []Key {
	var out []Key
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// repoKeys maps the appliance's repository names (keys of
// dnf_repos_default, which the fatimage-ark data source hands over as
// `name`) to their key: exact names, and prefixes for the families the
// appliance covers with one key (epel-source, epel-cisco-openh264,
// OpenHPC-updates, cernvmfs_cfg/_pkgs/_eessi_cfg, TurboVNC-source).
// Matching ignores case: the appliance writes both Ceph and ceph.
var repoKeys = []struct {
	exact, prefix, key string
}{
	{"epel", "epel-", "epel"},
	{"openhpc", "openhpc-", "openhpc"},
	{"ceph", "ceph-source", "ceph"},
	{"", "cernvmfs", "cernvmfs"},
	{"turbovnc", "turbovnc-", "TurboVNC"},
	{"ondemand-web", "ondemand-web-", "ondemand-web"},
}

// ForRepo is the built-in key of a standard repository for OS major
// version major; ok is false for any other repository (the Rocky
// repositories' key comes with the image) or an OS major without keys.
func ForRepo(repo, major string) (Key, bool) {
	r := strings.ToLower(repo)
	for _, m := range repoKeys {
		if (m.exact != "" && r == m.exact) || strings.HasPrefix(r, m.prefix) {
			k, err := ByName(m.key, major)
			return k, err == nil
		}
	}
	return Key{}, false
}

// ByName is the built-in key name for OS major version major.
func ByName(name, major string) (Key, error) {
	found := false
	for _, k := range table {
		if k.Name == name {
			found = true
			if k.Major == major {
				return k, nil
			}
		}
	}
	if !found {
		return Key{}, fmt.Errorf("no built-in key %q (built-in keys: %s)", name, strings.Join(Names(), ", "))
	}
	return Key{}, fmt.Errorf("no built-in key %q for OS major version %q (built-in keys cover 8 and 9)", name, major)
}

// Names are the built-in keys' names, sorted.
func Names() []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range table {
		if !seen[k.Name] {
			seen[k.Name] = true
			out = append(out, k.Name)
		}
	}
	sort.Strings(out)
	return out
}

// All is every built-in key (for tests and docs).
func All() []Key { return append([]Key(nil), table...) }
