package packagesets

import (
	_ "embed"
	"fmt"
	"sync"

	"go.yaml.in/yaml/v3"
)

//go:embed native.yaml
var nativeYAML []byte

// Native is one row of native.yaml: steps of the appliance's
// fatimage.yml the plugin does itself, and what does them.
type Native struct {
	// Match names the steps (internal/appliance's Step.Keys).
	Match []string `yaml:"match"`
	// Groups are the built-in groups doing the work: native when the
	// build installs one of them.
	Groups []string `yaml:"groups"`
	// Steps are provisioner steps doing it in every build.
	Steps []string `yaml:"steps"`
	// None says why the step has nothing to do in the plugin's image.
	None string `yaml:"none"`
}

var native = sync.OnceValue(func() map[string]Native { return mustLoadNative(nativeYAML) })

func mustLoadNative(b []byte) map[string]Native {
	var t struct {
		Native []Native `yaml:"native"`
	}
	if err := yaml.Unmarshal(b, &t); err != nil {
		panic("native.yaml: " + err.Error())
	}
	out := map[string]Native{}
	for i, n := range t.Native {
		kinds := 0
		for _, set := range []bool{len(n.Groups) > 0, len(n.Steps) > 0, n.None != ""} {
			if set {
				kinds++
			}
		}
		if kinds != 1 || len(n.Match) == 0 {
			panic(fmt.Sprintf("native.yaml: row %d: give match and one of groups, steps, none", i))
		}
		for _, g := range n.Groups {
			if _, ok := builtin().Groups[g]; !ok {
				panic(fmt.Sprintf("native.yaml: row %d: unknown group %s", i, g))
			}
		}
		for _, k := range n.Match {
			if _, dup := out[k]; dup {
				panic("native.yaml: " + k + " matched twice")
			}
			out[k] = n
		}
	}
	return out
}

// NativeFor is the row for the first of keys that has one.
func NativeFor(keys []string) (Native, bool) {
	for _, k := range keys {
		if n, ok := native()[k]; ok {
			return n, true
		}
	}
	return Native{}, false
}

// NativeSteps are the provisioner steps the table names, for its test.
func NativeSteps() []string {
	var out []string
	for _, n := range native() {
		out = append(out, n.Steps...)
	}
	return out
}
