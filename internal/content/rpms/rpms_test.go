package rpms

import (
	"context"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
)

// The fetch: every URL staged as a .rpm for dnf, each checked with its
// gpgcheck flag, every opt-out warned about; the record by package name
// from the fetch's reports, which must name every RPM.
func TestFetchRecord(t *testing.T) {
	sum := strings.Repeat("a", 64)
	rs := []RPMURL{{URL: "https://h/a.rpm", SHA256: sum}, {URL: "https://h/b.rpm", InsecureSkipChecksum: true, DisableGPGCheck: true}}
	f, err := Kind{}.Fetch(context.Background(), content.Env{WorkDir: "/w", Source: "host"}, rs)
	if err != nil || f.Script.Say != "rpm_urls: fetching and checking 2 RPMs (content_source = host)" || len(f.Warnings) != 2 ||
		f.URLs[1].Dst != "/w/rpm-url-1.rpm" || f.URLs[1].SHA256 != "" || len(f.Script.Calls) != 2 ||
		strings.Join(f.Script.Calls[1], " ") != "fatimage_rpm_check rpm_urls[1] (https://h/b.rpm) 1 /w/rpm-url-1.rpm 0" {
		t.Fatalf("fetch %+v: %v", f, err)
	}
	out := "RPM-URL 0 " + sum + " a a-1-1\n"
	if err := f.Check(out); err == nil || err.Error() != "rpm_urls[1]: the fetch did not report the package" {
		t.Errorf("check: %v", err)
	}
	out += "RPM-URL 1 " + sum + " b b-2-1\n"
	r, err := Kind{}.Record(content.Env{Fetched: out}, rs)
	rec, _ := r["rpms"].(map[string]Record)
	if err != nil || rec["b"] != (Record{URL: "https://h/b.rpm", NVR: "b-2-1", SHA256: sum}) || !rec["a"].ChecksumVerified || !rec["a"].GPGCheck {
		t.Errorf("record %+v: %v", r, err)
	}
}
