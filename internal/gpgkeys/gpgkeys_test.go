package gpgkeys

import (
	"bytes"
	"io/fs"
	"strings"
	"testing"
)

// sheet is the contract sheet's section 3 table (and its "keys imported
// elsewhere" list): path and fingerprint per key and OS major, written
// out here independently of the table so that a wrong row or a changed
// vendored block fails.
var sheet = map[string]struct{ path, fpr string }{
	"epel/8":         {"/etc/pki/rpm-gpg/RPM-GPG-KEY-EPEL-8", "94E2 79EB 8D8F 25B2 1810 ADF1 21EA 45AB 2F86 D6A1"},
	"epel/9":         {"/etc/pki/rpm-gpg/RPM-GPG-KEY-EPEL-9", "FF8A D134 4597 106E CE81 3B91 8A38 72BF 3228 467C"},
	"openhpc/8":      {"/etc/pki/rpm-gpg/RPM-GPG-KEY-OpenHPC-2", "5392 744D 3C54 3ED5 7847 65E6 8A30 6019 DA56 5C6C"},
	"openhpc/9":      {"/etc/pki/rpm-gpg/RPM-GPG-KEY-OpenHPC-3", "6E19 BE11 D9A0 82C0 0A7D B41A 7AC0 5F09 40A9 0CC8"},
	"ceph/8":         {"/etc/pki/rpm-gpg/RPM-GPG-KEY-centos-storage-sig", "7412 9C0B 173B 071A 3775 951A D4A2 E50B E451 E5B5"},
	"ceph/9":         {"/etc/pki/rpm-gpg/RPM-GPG-KEY-centos-storage-sig", "7412 9C0B 173B 071A 3775 951A D4A2 E50B E451 E5B5"},
	"cernvmfs/8":     {"/etc/pki/rpm-gpg/RPM-GPG-KEY-CernVM", "70B9 8904 8820 8E31 5ED4 5208 230D 389D 8AE4 5CE7"},
	"cernvmfs/9":     {"/etc/pki/rpm-gpg/RPM-GPG-KEY-CernVM", "70B9 8904 8820 8E31 5ED4 5208 230D 389D 8AE4 5CE7"},
	"TurboVNC/8":     {"/etc/pki/rpm-gpg/RPM-GPG-KEY-TurboVNC", "AE1A 7BA4 EFFF 9A99 87E1 474C 4BAC CAB3 6E7F E9A1"},
	"TurboVNC/9":     {"/etc/pki/rpm-gpg/RPM-GPG-KEY-TurboVNC", "AE1A 7BA4 EFFF 9A99 87E1 474C 4BAC CAB3 6E7F E9A1"},
	"ondemand-web/8": {"/etc/pki/rpm-gpg/RPM-GPG-KEY-ondemand", "FE14 3EA1 CB37 8B56 9BBF 7C54 4B72 FE2B 92D3 1755"},
	"ondemand-web/9": {"/etc/pki/rpm-gpg/RPM-GPG-KEY-ondemand", "3D4C D7E7 D4BC 4526 3AC1 1388 C2AD B19A FD77 5498"},
	"RStudio/8":      {"/etc/pki/rpm-gpg/RPM-GPG-KEY-RStudio", "8B65 E5A1 07BB EFE3 BA99 C597 51C0 B5BB 19F9 2D60"},
	"RStudio/9":      {"/etc/pki/rpm-gpg/RPM-GPG-KEY-RStudio", "8B65 E5A1 07BB EFE3 BA99 C597 51C0 B5BB 19F9 2D60"},
	// not in the sheet's table (it names only the URL): the fingerprint
	// ceph.com publishes for download.ceph.com/keys/release.asc
	"ceph-release/8": {"/etc/pki/rpm-gpg/RPM-GPG-KEY-ceph-release", "08B7 3419 AC32 B4E9 66C1 A330 E84A C2C0 460F 3994"},
	"ceph-release/9": {"/etc/pki/rpm-gpg/RPM-GPG-KEY-ceph-release", "08B7 3419 AC32 B4E9 66C1 A330 E84A C2C0 460F 3994"},
}

// TestKeysMatchSheet computes every vendored block's fingerprint and
// checks it, and the key's path, against the sheet.
func TestKeysMatchSheet(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range All() {
		id := k.Name + "/" + k.Major
		seen[id] = true
		want, ok := sheet[id]
		if !ok {
			t.Errorf("%s: not in the sheet", id)
			continue
		}
		fpr, err := Fingerprint(k.Armored())
		if err != nil {
			t.Errorf("%s (%s): %v", id, k.file, err)
			continue
		}
		if w := strings.ReplaceAll(want.fpr, " ", ""); fpr != w || k.Fingerprint != w {
			t.Errorf("%s: block's fingerprint %s, table %s, sheet %s", id, fpr, k.Fingerprint, w)
		}
		if k.Path != want.path {
			t.Errorf("%s: path %s, sheet %s", id, k.Path, want.path)
		}
	}
	for id := range sheet {
		if !seen[id] {
			t.Errorf("%s: in the sheet but not built in", id)
		}
	}
}

// TestEveryFileUsed keeps keys/ and the table in step.
func TestEveryFileUsed(t *testing.T) {
	used := map[string]bool{}
	for _, k := range All() {
		used[k.file] = true
	}
	entries, err := fs.ReadDir(keyFiles, "keys")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(used) {
		t.Errorf("keys/ has %d files, the table uses %d", len(entries), len(used))
	}
	for _, e := range entries {
		if !used[e.Name()] {
			t.Errorf("keys/%s is not in the table", e.Name())
		}
	}
}

func TestForRepo(t *testing.T) {
	for _, tc := range []struct{ repo, major, want string }{
		// the appliance's dnf_repos_default names (sheet section 3)
		{"epel", "9", "RPM-GPG-KEY-EPEL-9"},
		{"epel-cisco-openh264", "9", "RPM-GPG-KEY-EPEL-9"},
		{"epel-source", "8", "RPM-GPG-KEY-EPEL-8"},
		{"OpenHPC", "8", "RPM-GPG-KEY-OpenHPC-2"},
		{"OpenHPC-updates", "9", "RPM-GPG-KEY-OpenHPC-3"},
		{"Ceph", "9", "RPM-GPG-KEY-centos-storage-sig"},
		{"ceph", "8", "RPM-GPG-KEY-centos-storage-sig"},
		{"cernvmfs_cfg", "9", "RPM-GPG-KEY-CernVM"},
		{"cernvmfs_pkgs", "9", "RPM-GPG-KEY-CernVM"},
		{"cernvmfs_eessi_cfg", "8", "RPM-GPG-KEY-CernVM"},
		{"TurboVNC", "9", "RPM-GPG-KEY-TurboVNC"},
		{"ondemand-web", "9", "RPM-GPG-KEY-ondemand"},
		// no built-in key: the image's own (Rocky), unsigned (grafana),
		// someone else's, or an OS without built-in keys
		{"baseos", "9", ""},
		{"appstream", "9", ""},
		{"grafana", "9", ""},
		{"epelx", "9", ""},
		{"ceph-squid", "9", ""},
		{"doca", "9", ""},
		{"epel", "10", ""},
	} {
		k, ok := ForRepo(tc.repo, tc.major)
		if got := strings.TrimPrefix(k.Path, Dir); ok != (tc.want != "") || got != tc.want {
			t.Errorf("ForRepo(%q, %q) = %q, %v; want %q", tc.repo, tc.major, got, ok, tc.want)
		}
	}
	// the two OnDemand keys share a path
	k8, _ := ForRepo("ondemand-web", "8")
	k9, _ := ForRepo("ondemand-web", "9")
	if k8.Path != k9.Path || bytes.Equal(k8.Armored(), k9.Armored()) {
		t.Errorf("ondemand-web: RL8 and RL9 keys must share the path and differ")
	}
}

func TestByName(t *testing.T) {
	if k, err := ByName("RStudio", "9"); err != nil || k.ID() != "19f92d60" {
		t.Errorf("ByName(RStudio, 9) = %+v, %v", k, err)
	}
	if _, err := ByName("rstudio", "9"); err == nil || !strings.Contains(err.Error(), "RStudio") {
		t.Errorf("unknown name: %v, want the list of names", err)
	}
	if _, err := ByName("epel", "7"); err == nil || !strings.Contains(err.Error(), "major version") {
		t.Errorf("unknown major: %v", err)
	}
}

func TestFingerprintRejects(t *testing.T) {
	good := string(mustKey(t, "epel", "9").Armored())
	// flip one base64 character in the body: the self-signatures catch it
	i := strings.Index(good, "\n\n") + 10
	c := byte('A')
	if good[i] == 'A' {
		c = 'B'
	}
	bad := good[:i] + string(c) + good[i+1:]
	for name, tc := range map[string]struct{ in, want string }{
		"no armor":    {"mQENBF331lgBCAC4", "no -----BEGIN PGP PUBLIC KEY BLOCK----- line"},
		"no end":      {"-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQENBF331lgBCAC4\n", "truncated"},
		"corrupted":   {bad, "corrupted"},
		"empty":       {"-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n-----END PGP PUBLIC KEY BLOCK-----\n", "empty"},
		"not a key":   {"-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nwsBcBAABCAAQ\n-----END PGP PUBLIC KEY BLOCK-----\n", "truncated"},
		"private key": {strings.ReplaceAll(good, "PUBLIC", "PRIVATE"), `not a "PGP PUBLIC KEY BLOCK"`},
	} {
		fpr, err := Fingerprint([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: fingerprint %q, error %v; want an error saying %q", name, fpr, err, tc.want)
		}
	}
}

func mustKey(t *testing.T, name, major string) Key {
	t.Helper()
	k, err := ByName(name, major)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
