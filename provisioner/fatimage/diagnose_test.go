package fatimage

import (
	"strings"
	"testing"
)

// dnf outputs as the lab's VMs print them (dnf 4).
const (
	dnfNoKeyOutput = `+fatimage: dnf -y --setopt=max_parallel_downloads=10 --setopt=install_weak_deps=false install ohpc-filesystem

You have enabled checking of packages via GPG keys. This is a good thing.
However, you do not have any GPG public keys installed. You need to download
the keys for packages you wish to install and install them.
You can do that by running the command:
    rpm --import public.gpg.key

For more information contact your distribution or package provider.

Problem repository: [OpenHPC]
bandwidth: 0
baseurl: http://10.0.0.1/pulp/content/OpenHPC/3/EL_9/20251106T211545
gpgcheck: 1
gpgkey: 
password: <sensitive>
username: lab-ark
`
	dnfNoMatchOutput = `+fatimage: dnf -y --setopt=max_parallel_downloads=10 --setopt=install_weak_deps=false install no-such-package-xyz htop-nope
Last metadata expiration check: 0:00:02 ago on Sun Nov 22 14:03:15 2026.
No match for argument: no-such-package-xyz
No match for argument: htop-nope
Error: Unable to find a match: no-such-package-xyz htop-nope
`
	dnfMetadataOutput = `+fatimage: dnf -y makecache --disablerepo=* --enablerepo=baseos --enablerepo=epel
baseos                                          981  B/s |  14  B     00:00
Errors during downloading metadata for repository 'baseos':
  - Status code: %s for http://10.0.0.1/pulp/content/rocky/9.6/BaseOS/x86_64/os/20000101T000000/repodata/repomd.xml (IP: 10.0.0.1)
Error: Failed to download metadata for repo 'baseos': Cannot download repomd.xml: Cannot download repodata/repomd.xml: All mirrors were tried
`
)

func TestDiagnoseDNF(t *testing.T) {
	url := "http://10.0.0.1/pulp/content/rocky/9.6/BaseOS/x86_64/os/20000101T000000/repodata/repomd.xml"
	enabled := []string{"baseos", "OpenHPC"}
	for _, tc := range []struct {
		name, out string
		want      []string
	}{
		{"signed without key", dnfNoKeyOutput, []string{`repository "OpenHPC": packages are signed (gpgcheck = 1) but no key for it is installed: add its key to gpg_keys`}},
		// built-in keys imported, none the signer's: dnf names only the
		// package, its row in the transaction table the repository
		{"wrong key", "================================================================================\n Package               Arch     Version              Repository   Size\n" +
			"================================================================================\nInstalling:\n ohpc-filesystem       noarch   3.0-300.ohpc.1.1     OpenHPC      6.1 k\n" +
			" python3-a-package-with-a-very-long-name\n                       noarch   1:2.0-1.el9          epel          10 k\n\n" +
			"Public key for ohpc-filesystem-3.0-300.ohpc.1.1.noarch.rpm is not installed\nPublic key for python3-a-package-with-a-very-long-name-2.0-1.el9.noarch.rpm is not installed\nError: GPG check FAILED\n",
			[]string{`repository "OpenHPC": packages are signed (gpgcheck = 1) but no key for it is installed: add its key to gpg_keys`,
				`repository "epel": packages are signed (gpgcheck = 1) but no key for it is installed: add its key to gpg_keys`}},
		{"no key, repository not named", "Public key for x-1.0-1.noarch.rpm is not installed. Failing package is: x-1.0-1.noarch\n GPG Keys are configured as: \nError: GPG check FAILED\n",
			[]string{"packages are signed (gpgcheck = 1) but no key for x-1.0-1.noarch.rpm is installed: add their repository's key to gpg_keys"}},
		{"no match", dnfNoMatchOutput, []string{"packages: no match for no-such-package-xyz, htop-nope in the configured repositories (baseos, OpenHPC)"}},
		{"module missing", "Error: Problems in request:\nmissing groups or modules: nodejs:99\n", []string{"module_streams: no module or group nodejs:99 in the configured repositories (baseos, OpenHPC)"}},
		{"401", strings.Replace(dnfMetadataOutput, "%s", "401", 1), []string{`repository "baseos": the server refused access (HTTP 401 for ` + url + `): check repo_username and repo_password (or ARK_USERNAME and ARK_PASSWORD) and that they may read this snapshot`}},
		{"403", strings.Replace(dnfMetadataOutput, "%s", "403", 1), []string{`repository "baseos": the server refused access (HTTP 403 for ` + url + `): check repo_username and repo_password (or ARK_USERNAME and ARK_PASSWORD) and that they may read this snapshot`}},
		{"404", strings.Replace(dnfMetadataOutput, "%s", "404", 1), []string{`repository "baseos": no repository at its baseurl (HTTP 404 for ` + url + `): check the baseurl and that the snapshot exists`}},
		{"500", strings.Replace(dnfMetadataOutput, "%s", "500", 1), []string{`repository "baseos": downloading its metadata failed (HTTP 500 for ` + url + `)`}},
		{"metadata without status", "Error: Failed to download metadata for repo 'epel': Cannot download repomd.xml: Curl error (7): Couldn't connect to server\n",
			[]string{`repository "epel": downloading its metadata failed: Cannot download repomd.xml: Curl error (7): Couldn't connect to server`}},
		{"nothing known", "Error: Transaction test error:\n  file /x conflicts\n", nil},
	} {
		got := diagnoseDNF(tc.out, enabled)
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
	if got := diagnoseDNF(dnfNoMatchOutput, nil); len(got) != 1 || !strings.HasSuffix(got[0], "in the image's own repositories (no repos configured)") {
		t.Errorf("no repos: %q", got)
	}
}

// A failed dnf command's error is headed by the cause; the repository
// dump dnf prints after a signature failure is left out of the tail.
func TestDNFErrorHeadline(t *testing.T) {
	s := &state{plan: &plan{cfg: &Config{}, repos: []Repo{{RepoName: "baseos"}, {RepoName: "OpenHPC"}}}}
	msg := s.commandError("packages", "sudo -n sh -eu x.sh", 1, dnfNoKeyOutput).Error()
	first, rest, _ := strings.Cut(msg, "\n")
	if first != `repository "OpenHPC": packages are signed (gpgcheck = 1) but no key for it is installed: add its key to gpg_keys` ||
		!strings.HasPrefix(rest, "fatimage packages: dnf -y --setopt=max_parallel_downloads=10 --setopt=install_weak_deps=false install ohpc-filesystem exited with status 1") ||
		strings.Contains(rest, "bandwidth") || !strings.HasSuffix(rest, "Problem repository: [OpenHPC]") {
		t.Error(msg)
	}
}
