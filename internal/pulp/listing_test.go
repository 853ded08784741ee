package pulp

import (
	"slices"
	"strings"
	"testing"
)

const listing3115 = `
<html>
<head><title>Index of rocky/9.4/BaseOS/x86_64/os/</title></head>
<body bgcolor="white">
<h1>Index of rocky/9.4/BaseOS/x86_64/os/</h1>
<hr><pre><a href="../">../</a>
<a href="./20240816T002610/">20240816T002610/</a>                                                  
<a href="./20240712T001234/">20240712T001234/</a>                                                  
<a href="./development/">development/</a>                                                  
</pre><hr></body>
</html>
`

const listing322 = `
<html>
<head><title>Index of rocky/9.4/BaseOS/x86_64/os/</title></head>
<body bgcolor="white">
<h1>Index of rocky/9.4/BaseOS/x86_64/os/</h1>
<hr><pre><a href="../">../</a>
<a href="20240712T001234/">20240712T001234/</a>          
<a href="20240816T002610Z/">20240816T002610Z/</a>          
<a href="production/">production/</a>          
</pre><hr></body>
</html>
`

const listingLegacy = `<!DOCTYPE html><html><body><ul><li><a href="20240712T001234/">20240712T001234/</a></li><li><a href="20240816T002610/">20240816T002610/</a></li><li><a href="config.repo">config.repo</a></li></ul></body></html>`

func TestParseListing(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"pulpcore>=3.115", listing3115, []string{"20240712T001234", "20240816T002610"}},
		{"pulpcore 3.22-3.114 with checkpoint", listing322, []string{"20240712T001234", "20240816T002610Z"}},
		{"pulpcore<3.22", listingLegacy, []string{"20240712T001234", "20240816T002610"}},
		{"empty pre", "\n<html><body><hr><pre><a href=\"../\">../</a>\n</pre><hr></body></html>", nil},
		{"empty body", "", nil},
		{"stray entries only", `<pre><a href="../">../</a><a href="./2024/">2024/</a><a href="./20240712T001234">no slash</a><a href="./20240712T0012345/">too long</a><a href="https://x/20240712T001234/">abs</a></pre>`, nil},
		{"duplicates", `<a href="20240712T001234/">a</a><a href="./20240712T001234/">a</a>`, []string{"20240712T001234"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseListing(strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseTimestampAndCutoff(t *testing.T) {
	for _, ok := range []string{"20250101T000000", "20240816T002610Z"} {
		if _, err := ParseTimestamp(ok); err != nil {
			t.Errorf("ParseTimestamp(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "2025-01-01", "20250101T00000", "20251301T000000", "20250101t000000", "x20250101T000000"} {
		if _, err := ParseTimestamp(bad); err == nil {
			t.Errorf("ParseTimestamp(%q) accepted", bad)
		}
	}
	a, err := ParseCutoff("2025-01-01T01:00:00+01:00")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ParseCutoff("20250101T000000")
	if !a.Equal(b) {
		t.Fatalf("RFC 3339 cut-off %v != timestamp cut-off %v", a, b)
	}
	if _, err := ParseCutoff("yesterday"); err == nil || !strings.Contains(err.Error(), "RFC 3339") {
		t.Fatalf("want an error naming both accepted forms, got %v", err)
	}
}
