package labtest

import (
	"net"
	"testing"
	"time"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
	sdkssh "github.com/hashicorp/packer-plugin-sdk/sdk-internals/communicator/ssh"
	"golang.org/x/crypto/ssh"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
)

// Communicator is the Packer SDK's real SSH communicator (what a
// provisioner gets from packer) to ip as the login user with signer,
// retried until sshd answers, for up to two minutes.
func Communicator(tb testing.TB, ip string, signer ssh.Signer) packersdk.Communicator {
	tb.Helper()
	cfg := &sdkssh.Config{
		Connection: func() (net.Conn, error) {
			return net.DialTimeout("tcp", net.JoinHostPort(ip, "22"), 5*time.Second)
		},
		SSHConfig: &ssh.ClientConfig{
			User:            lab.SSHUser,
			Auth:            []ssh.AuthMethod{ssh.PublicKeys(signer)},
			HostKeyCallback: ssh.InsecureIgnoreHostKey(), // lab VMs make fresh host keys
			Timeout:         5 * time.Second,
		},
		HandshakeTimeout:  10 * time.Second,
		KeepAliveInterval: 2 * time.Second,
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		c, err := sdkssh.New(ip, cfg)
		if err == nil {
			return c
		}
		if time.Now().After(deadline) {
			tb.Fatalf("ssh: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
