package pulpfake_test

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/pulpfake"
)

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]pulpfake.Format{
		"3.115": pulpfake.Format3115, "new": pulpfake.Format3115,
		"3.22": pulpfake.Format322, "legacy": pulpfake.FormatLegacy, "LEGACY": pulpfake.FormatLegacy,
	} {
		got, err := pulpfake.ParseFormat(in)
		if err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %v, %v; want %v", in, got, err, want)
		}
		if back, _ := pulpfake.ParseFormat(got.String()); back != got {
			t.Errorf("String round trip of %v failed", got)
		}
	}
	if _, err := pulpfake.ParseFormat("3.0"); err == nil {
		t.Error("ParseFormat(3.0) succeeded")
	}
	var zero pulpfake.Format
	if zero != pulpfake.Format3115 {
		t.Error("zero Format is not Format3115")
	}
}

// paddedLine matches an entry line of the newer formats: link, then at least
// 10 spaces of padding, then end of line.
var paddedLine = regexp.MustCompile(`(?m)^<a href="[^"]*">[^<]*</a> {10,}$`)

func TestListingFormats(t *testing.T) {
	const pulpPath = "rocky/9.4/BaseOS/x86_64/os"
	snapshots := []string{"20240816T002610", "20240712T001234", "20240101T000000"}
	want := []string{"20240101T000000/", "20240712T001234/", "20240816T002610/"}

	for _, tc := range []struct {
		format     pulpfake.Format
		hrefPrefix string
	}{
		{pulpfake.Format3115, "./"},
		{pulpfake.Format322, ""},
		{pulpfake.FormatLegacy, ""},
	} {
		t.Run(tc.format.String(), func(t *testing.T) {
			s := startServer(t, pulpfake.Options{Format: tc.format})
			s.AddSnapshots(pulpPath, snapshots...)

			r := get(t, s.ContentURL()+"/"+pulpPath+"/")
			expectStatus(t, "listing", r, http.StatusOK)
			if ct := r.header.Get("Content-Type"); ct != "text/html" {
				t.Errorf("Content-Type %q, want text/html", ct)
			}
			hrefs, texts := links(r.body)
			newer := tc.format != pulpfake.FormatLegacy
			if newer {
				if len(hrefs) == 0 || hrefs[0] != "../" || texts[0] != "../" {
					t.Fatalf("first link is not ../: %q", hrefs)
				}
				hrefs, texts = hrefs[1:], texts[1:]
			}
			if !slices.Equal(texts, want) {
				t.Errorf("entries %q, want %q", texts, want)
			}
			for i, h := range hrefs {
				if h != tc.hrefPrefix+want[i] {
					t.Errorf("href %q, want %q", h, tc.hrefPrefix+want[i])
				}
			}
			if strings.Count(r.body, `href="../"`) != map[bool]int{true: 1, false: 0}[newer] {
				t.Errorf("wrong number of ../ links in %q", r.body)
			}

			if newer {
				if !strings.HasPrefix(r.body, "\n<html>\n<head><title>Index of "+pulpPath+"/</title></head>\n") {
					t.Errorf("unexpected head: %q", r.body)
				}
				for _, frag := range []string{
					"<body bgcolor=\"white\">\n<h1>Index of " + pulpPath + "/</h1>\n<hr><pre><a href=\"../\">../</a>\n",
					"</pre><hr></body>\n</html>",
				} {
					if !strings.Contains(r.body, frag) {
						t.Errorf("body lacks %q:\n%s", frag, r.body)
					}
				}
				if n := len(paddedLine.FindAllString(r.body, -1)); n != len(want) {
					t.Errorf("%d padded entry lines, want %d:\n%s", n, len(want), r.body)
				}
				if strings.Contains(r.body, "<ul>") || strings.Contains(r.body, "DOCTYPE") {
					t.Error("newer format contains legacy markup")
				}
			} else {
				wantBody := "<!DOCTYPE html><html><body><ul>"
				for _, e := range want {
					wantBody += `<li><a href="` + e + `">` + e + `</a></li>`
				}
				wantBody += "</ul></body></html>"
				if r.body != wantBody {
					t.Errorf("legacy body\n%q\nwant\n%q", r.body, wantBody)
				}
			}
		})
	}
}

func TestRootListingSortedAndIntermediateLevels(t *testing.T) {
	s := startServer(t, pulpfake.Options{})
	s.AddSnapshots("rocky/9.6/BaseOS/x86_64/os", "20250102T030405")
	s.AddSnapshots("rocky/9.6/AppStream/x86_64/os", "20250102T030405")
	s.AddSnapshots("rocky/9.5/BaseOS/x86_64/os", "20250102T030405")
	s.AddSnapshots("epel/9/Everything/x86_64", "20250102T030405")
	s.AddSnapshots("OpenHPC/3/EL_9", "20250102T030405")
	s.AddSnapshots("OpenHPC/3/updates/EL_9", "20250102T030405")

	r := get(t, s.ContentURL()+"/")
	expectStatus(t, "root", r, http.StatusOK)
	// Plain string order: upper case sorts before lower case.
	if got, want := entries(r.body), []string{"OpenHPC/", "epel/", "rocky/"}; !slices.Equal(got, want) {
		t.Errorf("root entries %q, want %q", got, want)
	}
	if strings.Contains(r.body, `href="../"`) {
		t.Error("root listing has ../")
	}

	for prefix, want := range map[string][]string{
		"rocky/":         {"9.5/", "9.6/"},
		"rocky/9.6/":     {"AppStream/", "BaseOS/"},
		"OpenHPC/3/":     {"EL_9/", "updates/"},
		"OpenHPC/3/upd/": nil,
	} {
		r := get(t, s.ContentURL()+"/"+prefix)
		if want == nil {
			expect404(t, prefix, r)
			continue
		}
		expectStatus(t, prefix, r, http.StatusOK)
		if got := entries(r.body); !slices.Equal(got, want) {
			t.Errorf("%s: entries %q, want %q", prefix, got, want)
		}
		if !strings.Contains(r.body, "<title>Index of "+prefix+"</title>") {
			t.Errorf("%s: title wrong:\n%s", prefix, r.body)
		}
	}
}

func TestHiddenNotListedButServed(t *testing.T) {
	s := startServer(t, pulpfake.Options{})
	const p = "rocky/9.6/BaseOS/x86_64/os"
	s.AddSnapshots(p, "20250102T030405")
	s.AddDistribution(pulpfake.Distribution{BasePath: p + "/20260101T000000", Hidden: true})
	s.AddDistribution(pulpfake.Distribution{BasePath: "secret/only/20250101T000000", Hidden: true})

	r := get(t, s.ContentURL()+"/"+p+"/")
	if got, want := entries(r.body), []string{"20250102T030405/"}; !slices.Equal(got, want) {
		t.Errorf("entries %q, want %q", got, want)
	}
	if got := entries(get(t, s.ContentURL()+"/").body); slices.Contains(got, "secret/") {
		t.Errorf("root lists hidden-only prefix: %q", got)
	}
	// Like pulpcore, a prefix with only hidden distributions below is an
	// empty listing rather than a 404.
	r = get(t, s.ContentURL()+"/secret/")
	expectStatus(t, "hidden-only prefix", r, http.StatusOK)
	if got := entries(r.body); len(got) != 0 {
		t.Errorf("hidden-only prefix lists %q", got)
	}

	r = get(t, s.ContentURL()+"/"+p+"/20260101T000000/repodata/repomd.xml")
	expectStatus(t, "hidden repomd", r, http.StatusOK)
	if !strings.Contains(r.body, "<repomd") {
		t.Errorf("hidden repomd body %q", r.body)
	}
	r = get(t, s.ContentURL()+"/"+p+"/20260101T000000/")
	expectStatus(t, "hidden listing", r, http.StatusOK)
	if got, want := entries(r.body), []string{"repodata/"}; !slices.Equal(got, want) {
		t.Errorf("hidden distribution entries %q, want %q", got, want)
	}
}
