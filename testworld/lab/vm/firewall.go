package vm

import (
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
)

// A machine's security groups are enforced on the host, outside the
// guest (which is root in its namespace and runs a firewall of its own),
// as Neutron's Linux bridge agent filters a hypervisor's tap: iptables
// with the physdev match on the bridge port (the veth's host end), so
// br_netfilter must hand bridged IPv4 to iptables. Traffic the host
// itself sends to the VM, or routes to it (another VM's connection to its
// floating IP), never crosses a bridge port's iptables hooks, so OUTPUT
// and FORWARD catch it by destination (the fixed and floating IPs).
// Each machine has three chains: fli- (into the VM: the ingress rules),
// flo- (out of the VM: egress) and fla- (the host's packets to its
// addresses); the jumps into them sit at the top of FORWARD, INPUT and
// OUTPUT. Stateful: answers to allowed connections pass. What is not
// allowed is dropped, never refused. IPv6 is not filtered (the lab's
// network has none).

// FirewallRule allows one flow: Protocol "" (any), a name (tcp, udp,
// icmp) or a number; PortMin and PortMax the TCP/UDP port range (0: any),
// or for ICMP the type and code; Remote the peer's CIDR ("": any).
type FirewallRule struct {
	Protocol         string
	PortMin, PortMax int
	Remote           string
}

// Firewall is what a machine's port lets through, beyond answers to
// allowed connections and DHCP: Ingress into the VM, Egress out of it.
type Firewall struct {
	Ingress, Egress []FirewallRule
}

func chainIn(veth string) string   { return "fli-" + veth }
func chainOut(veth string) string  { return "flo-" + veth }
func chainAddr(veth string) string { return "fla-" + veth }

// firewallJumps are the rules jumping into veth's chains (as iptables
// arguments after the -A/-I/-D verb).
func firewallJumps(veth, bridge string) [][]string {
	return [][]string{
		{"FORWARD", "-m", "physdev", "--physdev-out", veth, "--physdev-is-bridged", "-j", chainIn(veth)},
		{"FORWARD", "-m", "physdev", "--physdev-in", veth, "-j", chainOut(veth)},
		{"FORWARD", "-o", bridge, "-j", chainAddr(veth)},
		{"INPUT", "-m", "physdev", "--physdev-in", veth, "-j", chainOut(veth)},
		{"OUTPUT", "-o", bridge, "-j", chainAddr(veth)},
	}
}

// ruleArgs is r in iptables' words; dir "s" (ingress: from the remote)
// or "d" (egress: to it).
func ruleArgs(r FirewallRule, dir string) []string {
	var a []string
	if r.Remote != "" {
		a = append(a, "-"+dir, r.Remote)
	}
	p := strings.ToLower(r.Protocol)
	if p == "" || p == "any" {
		return a
	}
	a = append(a, "-p", p)
	switch {
	case (p == "tcp" || p == "udp" || p == "6" || p == "17") && r.PortMin > 0:
		ports := strconv.Itoa(r.PortMin)
		if r.PortMax > r.PortMin {
			ports += ":" + strconv.Itoa(r.PortMax)
		}
		a = append(a, "--dport", ports)
	case (p == "icmp" || p == "1") && r.PortMin > 0:
		t := strconv.Itoa(r.PortMin)
		if r.PortMax > 0 {
			t += "/" + strconv.Itoa(r.PortMax)
		}
		a = append(a, "--icmp-type", t)
	}
	return a
}

// firewallRestore is the iptables-restore input that replaces the three
// chains' rules at once, so an update never leaves the port open.
func firewallRestore(veth string, addrs []string, fw Firewall) string {
	in, out, ad := chainIn(veth), chainOut(veth), chainAddr(veth)
	var b strings.Builder
	line := func(chain string, args ...string) { fmt.Fprintf(&b, "-A %s %s\n", chain, strings.Join(args, " ")) }
	fmt.Fprintf(&b, "*filter\n:%s - [0:0]\n:%s - [0:0]\n:%s - [0:0]\n", in, out, ad)
	for _, c := range []string{in, out} {
		line(c, "-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED", "-j", "RETURN")
		line(c, "-m", "conntrack", "--ctstate", "INVALID", "-j", "DROP")
	}
	line(in, "-p", "udp", "--sport", "67", "--dport", "68", "-j", "RETURN") // DHCP's answers
	line(out, "-p", "udp", "--sport", "68", "--dport", "67", "-j", "RETURN")
	for _, r := range fw.Ingress {
		line(in, append(ruleArgs(r, "s"), "-j", "RETURN")...)
	}
	for _, r := range fw.Egress {
		line(out, append(ruleArgs(r, "d"), "-j", "RETURN")...)
	}
	line(in, "-j", "DROP")
	line(out, "-j", "DROP")
	for _, a := range addrs {
		line(ad, "-d", a+"/32", "-j", in)
	}
	b.WriteString("COMMIT\n")
	return b.String()
}

// ensureBridgeNetfilter makes the kernel pass bridged IPv4 through
// iptables (br_netfilter), as Neutron's agent needs it to.
func ensureBridgeNetfilter() error {
	const knob = "/proc/sys/net/bridge/bridge-nf-call-iptables"
	if _, err := os.Stat(knob); err != nil {
		if out, err := exec.Command("modprobe", "br_netfilter").CombinedOutput(); err != nil {
			return fmt.Errorf("vm: security groups need br_netfilter: modprobe: %v: %s", err, strings.TrimSpace(string(out)))
		}
	}
	b, err := os.ReadFile(knob)
	if err != nil {
		return fmt.Errorf("vm: security groups need br_netfilter: %w", err)
	}
	if strings.TrimSpace(string(b)) != "1" {
		return os.WriteFile(knob, []byte("1\n"), 0o644)
	}
	return nil
}

// SetFirewall filters the machine's port as fw says, at once; nil lifts
// the filter. The machine's own Firewall (MachineSpec) is applied before
// its port comes up.
func (vm *Machine) SetFirewall(fw *Firewall) error {
	vm.opMu.Lock()
	defer vm.opMu.Unlock()
	vm.mu.Lock()
	if vm.destroyed {
		vm.mu.Unlock()
		return ErrDestroyed
	}
	same := reflect.DeepEqual(vm.fw, fw)
	vm.fw = fw
	vm.mu.Unlock()
	if same {
		return nil
	}
	if fw == nil {
		vm.removeFirewall()
		return nil
	}
	return vm.applyFirewall()
}

// applyFirewall writes vm.fw's chains for the machine's current
// addresses and makes sure the jumps are in place (opMu held).
func (vm *Machine) applyFirewall() error {
	vm.mu.Lock()
	fw := vm.fw
	addrs := append([]string{vm.spec.FixedIP}, vm.fips...)
	vm.mu.Unlock()
	if fw == nil {
		return nil
	}
	if err := ensureBridgeNetfilter(); err != nil {
		return err
	}
	jumps := firewallJumps(vm.veth, vm.bridge())
	vm.m.regUpdate(func(r *registryRecord) { r.Firewalls[vm.veth] = jumps })
	cmd := exec.Command("iptables-restore", "-w", "5", "--noflush")
	cmd.Stdin = strings.NewReader(firewallRestore(vm.veth, addrs, *fw))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("vm %s: iptables-restore: %v: %s", vm.spec.ID, err, strings.TrimSpace(string(out)))
	}
	for _, j := range jumps {
		if exec.Command("iptables", append([]string{"-w", "5", "-C"}, j...)...).Run() == nil {
			continue
		}
		if err := run("iptables", append([]string{"-w", "5", "-I", j[0], "1"}, j[1:]...)...); err != nil {
			return err
		}
	}
	return nil
}

// removeFirewall takes the machine's jumps and chains away.
func (vm *Machine) removeFirewall() {
	removeFirewallOf(vm.veth, firewallJumps(vm.veth, vm.bridge()))
	vm.m.regUpdate(func(r *registryRecord) { delete(r.Firewalls, vm.veth) })
}

// removeFirewallOf deletes veth's jumps (as recorded) and its chains;
// what is already gone is no error.
func removeFirewallOf(veth string, jumps [][]string) {
	for _, j := range jumps {
		// a jump may be there twice (two applies racing a sweep)
		for n := 0; n < 4 && exec.Command("iptables", append([]string{"-w", "5", "-D"}, j...)...).Run() == nil; n++ {
		}
	}
	// flushed first: fla- jumps to fli-, which cannot go while referenced
	chains := []string{chainAddr(veth), chainIn(veth), chainOut(veth)}
	for _, c := range chains {
		_ = exec.Command("iptables", "-w", "5", "-F", c).Run()
	}
	for _, c := range chains {
		_ = exec.Command("iptables", "-w", "5", "-X", c).Run()
	}
}

// bridge is the bridge the machine's port is in.
func (vm *Machine) bridge() string {
	if vm.spec.Bridge != "" {
		return vm.spec.Bridge
	}
	return vm.m.opts.Network.Bridge
}
