package lab

import (
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labhttp"
)

// HTTPSUpstreams are the internet hosts the release server also answers
// as, over HTTPS on port 443 of the lab's gateway address, with a
// certificate of the lab's CA: what the appliance fetches by a fixed
// https:// URL (grafana-dashboards curls https://grafana.com/api/...,
// osc.ood's install-package.yml imports ondemandKeyPath from
// https://yum.osc.edu, roles/slurm_exporter's dnf installs its RPM from
// https://github.com/stackhpc/prometheus-slurm-exporter/releases/...,
// stackhpc.os-manila-mount's install.yml cephKeyPath from
// https://download.ceph.com, roles/openondemand's rstudio_compute.yml
// and codeserver_compute.yml get_url their RPMs from
// https://download2.rstudio.org and https://github.com).
// A VM reaches them by name once its /etc/hosts maps the name to
// $LAB_UPSTREAMS_ADDR and its trust store holds $LAB_CA_CERT, as a site
// behind a mirror resolves the name to its mirror and trusts its own CA.
var HTTPSUpstreams = []string{"grafana.com", "yum.osc.edu", "download.ceph.com", "download2.rstudio.org", "github.com"}

// HTTPUpstreams are the internet hosts the release server also answers
// as over plain HTTP on port 80 of the same address: the appliance's
// hpctests role (source-hpl.yml) get_urls
// http://www.netlib.org/benchmark/hpl/hpl-<version>.tar.gz, which the
// release server holds at netlib's path (releases.HPLPath).
var HTTPUpstreams = []string{"www.netlib.org"}

// ondemandKeyPath is the Open OnDemand repository key's path under
// https://yum.osc.edu.
const ondemandKeyPath = "/ondemand/RPM-GPG-KEY-ondemand-SHA512"

// cephKeyPath is Ceph's release key's path under https://download.ceph.com
// (os_manila_mount_ceph_repo_key's default).
const cephKeyPath = "/keys/release.asc"

// caFile is the lab CA's certificate in Dir.
const caFile = "lab-ca.pem"

// serveUpstreams makes the lab's CA (l.CA, its certificate in Dir) and
// serves the release server over HTTPS as HTTPSUpstreams on gateway:443
// and over HTTP as HTTPUpstreams on gateway:80; every lab has a gateway
// address of its own, so the ports are free.
func (l *Lab) serveUpstreams(gateway string) error {
	ca, err := labhttp.NewCA()
	if err != nil {
		return fmt.Errorf("lab: CA: %w", err)
	}
	cert, err := ca.Issue(HTTPSUpstreams...)
	if err != nil {
		return fmt.Errorf("lab: CA: %w", err)
	}
	if err := os.WriteFile(filepath.Join(l.Dir, caFile), ca.PEM, 0o644); err != nil {
		return err
	}
	if _, err := l.Releases.ServeTLS(net.JoinHostPort(gateway, "443"), cert); err != nil {
		return fmt.Errorf("lab: serving %v: %w", HTTPSUpstreams, err)
	}
	if _, err := l.Releases.ServePlain(net.JoinHostPort(gateway, "80")); err != nil {
		return fmt.Errorf("lab: serving %v: %w", HTTPUpstreams, err)
	}
	l.CA = ca
	return nil
}
