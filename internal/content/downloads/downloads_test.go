package downloads

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
)

func TestDownloadChecksumOptOut(t *testing.T) {
	for _, tc := range []struct {
		d    Download
		want string
	}{
		{Download{URL: "https://x.example/a", Destination: "/a"}, "sha256 is required"},
		{Download{URL: "https://x.example/a", Destination: "/a", SHA256: strings.Repeat("a", 64), InsecureSkipChecksum: true}, "exclude each other"},
		{Download{URL: "https://x.example/a", Destination: "/a", InsecureSkipChecksum: true, Members: []string{"a"}}, "members needs extract = true"},
		{Download{URL: "https://x.example/a", Destination: "/a", InsecureSkipChecksum: true, Extract: true, Members: []string{"../a"}}, "must be a clean relative path"},
		{Download{URL: "https://x.example/a", Destination: "/a", InsecureSkipChecksum: true, Extract: true, Members: []string{"x/a"}}, ""},
	} {
		errs := Kind{}.Validate([]Download{tc.d})
		got := fmt.Sprint(errs)
		if (tc.want == "") != (len(errs) == 0) || !strings.Contains(got, tc.want) {
			t.Errorf("%+v: %s, want %q", tc.d, got, tc.want)
		}
	}
	// the members are passed to tar, as arguments of their own
	cs, err := Kind{}.Install(content.Env{WorkDir: "/w"}, []Download{{Destination: "/usr/bin", Extract: true, StripComponents: 1, Members: []string{"linux-amd64/helm"}}})
	if c := cs.Calls; err != nil || len(c) != 1 || !slices.Equal(c[0][len(c[0])-4:], []string{"1", "root", "root", "linux-amd64/helm"}) {
		t.Errorf("calls %q: %v", cs.Calls, err)
	}
}
