package fatimage

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// fakeCurl writes -o's file in two parts, a second apart, as a slow
// download does; with FAIL set it fails as curl -f does on a 404.
const fakeCurl = `while [ "$#" -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
head -c 1048576 /dev/zero > "$out"
sleep 1
[ -z "${FAIL:-}" ] || exit 22
head -c 2097152 /dev/zero >> "$out"
sleep 1`

// A VM-side download says how much has arrived while it lasts, and ends
// when curl ends: the progress loop's sleep keeps no output open.
func TestFetchProgress(t *testing.T) {
	for _, tc := range []struct {
		name, interval, fail string
		want                 []string
	}{
		{"slow download", "0.3", "", []string{"downloads[0]: 1 MiB so far", "downloads[0]: 3 MiB so far"}},
		{"failing download", "0.3", "1", []string{"downloads[0]: 1 MiB so far", "!fatimage: downloads[0]: downloading http://x.example/f failed"}},
		// a sleep longer than the download: it must not hold the script
		{"no line before the interval", "30", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := withText(newScript("content"), "FATIMAGE_PROGRESS_SECONDS="+tc.interval+" FAIL="+tc.fail+"\nexport FAIL\n")
			sc.call("fatimage_fetch", "downloads[0]", "http://x.example/f", filepath.Join(t.TempDir(), "f"))
			start := time.Now()
			out, calls, err := runFaked(t, sc, map[string]string{"curl": fakeCurl})
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("the script took %s: a progress sleep held it", took)
			}
			if (err != nil) != (tc.fail != "") || len(calls) != 1 {
				t.Fatalf("err %v, calls %q:\n%s", err, calls, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w+"\n") {
					t.Errorf("no line %q in:\n%s", w, out)
				}
			}
			if tc.want == nil && regexp.MustCompile(`MiB so far`).MatchString(out) {
				t.Errorf("progress before the interval:\n%s", out)
			}
		})
	}
}
