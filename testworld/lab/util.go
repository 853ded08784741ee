package lab

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	mathrand "math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"slices"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/vm"
)

// RandomNetwork picks a bridge name and subnets no other lab on this host
// uses (parallel test packages each run one): a random one of 200, reserved
// host-wide (vm.ReserveNetwork).
func RandomNetwork() vm.NetworkOptions {
	var candidates []vm.NetworkOptions
	for _, k := range mathrand.Perm(200) {
		i := k + 20
		candidates = append(candidates, vm.NetworkOptions{
			Bridge:       fmt.Sprintf("fatlab%d", i),
			CIDR:         fmt.Sprintf("10.214.%d.0/24", i),
			Gateway:      fmt.Sprintf("10.214.%d.1", i),
			FloatingCIDR: fmt.Sprintf("172.25.%d.0/24", i),
		})
	}
	// Held until the lab's VM manager closes, so no concurrent lab on this
	// host picks it; when all are taken, the manager refuses the first
	// with an error that says so.
	n, err := vm.ReserveNetwork(candidates)
	if err != nil {
		return candidates[0]
	}
	return n
}

// DefaultNetwork is what `make lab-up` uses.
func DefaultNetwork() vm.NetworkOptions {
	return vm.NetworkOptions{Bridge: "fatlab0", CIDR: "10.210.0.0/24", Gateway: "10.210.0.1", FloatingCIDR: "172.24.4.0/24"}
}

func firstHost(cidr string) string {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return ""
	}
	return p.Masked().Addr().Next().String()
}

// awkwardSecret is a random secret with the characters credentials
// really contain and naive code mangles: URL escapes and delimiters,
// YAML/INI comment and quote characters, a space and non-ASCII.
func awkwardSecret() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "lab-" + hex.EncodeToString(b) + ` p%41ss#w:rd@"q' ü-` + hex.EncodeToString(b[:4])
}

func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func sortStrings(s []string) { slices.Sort(s) }
