package guests

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/vm"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
)

// GET /servers lists a guest Nova's driver spawned, running, with the
// processes of its VM; after the driver's DELETE it lists no guest and no
// process: what the tier's leftover count (realcloud.Tier.Snapshot) reads.
func TestListCountsGuestsAndTheirProcesses(t *testing.T) {
	needs.Root(t, "the guest host's VMs (network namespaces, overlay mounts, bridges)")
	needs.Tools(t, "ip", "unshare", "iptables", "rpmbuild", "rpm", "/usr/sbin/sshd")
	var candidates []vm.NetworkOptions
	for x := 0; x < 8; x++ {
		candidates = append(candidates, vm.NetworkOptions{Bridge: fmt.Sprintf("rcgl%d", x),
			CIDR: fmt.Sprintf("10.219.%d.0/24", x), Gateway: fmt.Sprintf("10.219.%d.1", x)})
	}
	n, err := vm.ReserveNetwork(candidates)
	if err != nil {
		t.Fatal(err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sock := filepath.Join(dir, "guests.sock")
	h, err := Start(ctx, Options{StateDir: dir, CacheDir: filepath.Join(cache, "fatimage-lab"), Socket: sock,
		BaseImage: filepath.Join(dir, "base.raw"), Network: n, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	requireListed(t, sock, "", 0)

	uuid := "5d0f3c8e-7d4b-4bb1-9a51-2f4bbd0c2c11"
	ip := n.Gateway[:len(n.Gateway)-1] + "10"
	spawn := fmt.Sprintf(`{"uuid": %q, "name": "listed", "hostname": "listed", "fixed_ip": %q, "mac": "fa:16:3e:00:00:10", "bridge": %q, "image": %q, "disk_format": "raw"}`,
		uuid, ip, n.Bridge, filepath.Join(dir, "base.raw"))
	call(t, sock, http.MethodPost, "/servers", spawn)
	if l := requireListed(t, sock, "listed", 1); l.Processes == 0 {
		t.Errorf("a running guest, and no process in its VM: %+v", l)
	}
	call(t, sock, http.MethodDelete, "/servers/"+uuid, "")
	requireListed(t, sock, "", 0)
}

// requireListed: the host lists one running guest called name (none when
// name is ""), and no VM process when it lists none.
func requireListed(t *testing.T, sock, name string, count int) Listing {
	t.Helper()
	l, err := List(context.Background(), sock)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Servers) != count || (count == 0 && l.Processes != 0) ||
		(count == 1 && (l.Servers[0].Name != name || l.Servers[0].Power != "running")) {
		t.Fatalf("GET /servers: %+v, want %d guest(s) %s", l, count, name)
	}
	return l
}

// call is one request as Nova's driver makes it; anything but 200 fails.
func call(t *testing.T, sock, method, path, body string) {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Minute, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		},
	}}
	req, err := http.NewRequest(method, "http://guests"+path, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out bytes.Buffer
	_, _ = out.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %s: %s", method, path, resp.Status, out.String())
	}
}
