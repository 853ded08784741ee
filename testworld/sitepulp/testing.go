package sitepulp

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"testing"
)

// StartT starts a server for a test and closes it when the test ends.
func StartT(t testing.TB, o Options) *Server {
	t.Helper()
	s, err := New(o)
	if err != nil {
		t.Fatalf("sitepulp: %v", err)
	}
	if err := s.Start(); err != nil {
		t.Fatalf("sitepulp: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// RepoFiles builds a minimal createrepo-shaped repository holding pkgs
// (file name below Packages/ -> content): repodata/repomd.xml naming a
// gzipped primary.xml that lists every package. It is meant for a
// pulpfake.Distribution's Files, as the upstream a sync reads.
func RepoFiles(pkgs map[string][]byte) map[string][]byte {
	names := make([]string, 0, len(pkgs))
	for n := range pkgs {
		names = append(names, n)
	}
	sort.Strings(names)
	var primary strings.Builder
	fmt.Fprintf(&primary, `<?xml version="1.0" encoding="UTF-8"?>
<metadata xmlns="http://linux.duke.edu/metadata/common" xmlns:rpm="http://linux.duke.edu/metadata/rpm" packages="%d">
`, len(names))
	files := map[string][]byte{}
	for _, n := range names {
		fmt.Fprintf(&primary, "<package type=\"rpm\"><name>%s</name><location href=\"Packages/%s\"/></package>\n", strings.TrimSuffix(n, ".rpm"), n)
		files["Packages/"+n] = pkgs[n]
	}
	primary.WriteString("</metadata>\n")
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte(primary.String())) //nolint:errcheck // in memory
	w.Close()
	sum := sha256.Sum256(gz.Bytes())
	name := "repodata/" + hex.EncodeToString(sum[:]) + "-primary.xml.gz"
	files[name] = gz.Bytes()
	files["repodata/repomd.xml"] = fmt.Appendf(nil, `<?xml version="1.0" encoding="UTF-8"?>
<repomd xmlns="http://linux.duke.edu/metadata/repo">
  <data type="primary">
    <checksum type="sha256">%s</checksum>
    <location href="%s"/>
  </data>
</repomd>
`, hex.EncodeToString(sum[:]), name)
	return files
}
