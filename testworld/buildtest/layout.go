package buildtest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
)

// PluginsFile is the file Layout adds to declare the plugin, so the test
// templates need no `packer { required_plugins ... }` header of their own.
const PluginsFile = "plugins.pkr.hcl"

var pluginsHCL = fmt.Sprintf(`packer {
  required_plugins {
    fatimage = {
      source  = %q
      version = ">= 0.1.0"
    }
  }
}
`, packertest.PluginSource)

// Layout lays a build directory out in dir: each name is a file or a
// directory under src (copied under the same name), or the name of an
// embedded shared template (FatCommonName, SitePulpName). It then adds PluginsFile unless a template in dir
// already declares required_plugins (the examples do).
func Layout(t testing.TB, dir, src string, names ...string) {
	t.Helper()
	for _, name := range names {
		dst := filepath.Join(dir, name)
		if data, ok := shared[name]; ok {
			writeFile(t, dst, data)
			continue
		}
		from := filepath.Join(src, name)
		st, err := os.Stat(from)
		if err != nil {
			t.Fatal(err)
		}
		if st.IsDir() {
			if err := os.CopyFS(dst, os.DirFS(from)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, dst, data)
	}
	templates, err := filepath.Glob(filepath.Join(dir, "*.pkr.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range templates {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte("required_plugins")) {
			return
		}
	}
	writeFile(t, filepath.Join(dir, PluginsFile), []byte(pluginsHCL))
}

func writeFile(t testing.TB, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(name, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
