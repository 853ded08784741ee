//go:build realcloud

package realcloud

import (
	"os"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
)

// The tier's tests run only under the realcloud build tag (make
// test-realcloud): make test does not start real OpenStack.
func TestMain(m *testing.M) {
	code := m.Run()
	packertest.Cleanup()
	os.Exit(code)
}
