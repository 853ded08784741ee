package bench

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/buildtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
)

// SecretHits counts the lab secrets data carries (each secret once).
func SecretHits(l *lab.Lab, data []byte) int {
	n := 0
	for _, s := range buildtest.Secrets(l) {
		if len(s) > 0 && bytes.Contains(data, s) {
			n++
		}
	}
	return n
}

// SecretHitsInTree counts the files under root carrying a lab secret, and
// how many regular files it read.
func SecretHitsInTree(l *lab.Lab, root string) (hits, files int, err error) {
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		if SecretHits(l, data) > 0 {
			hits++
		}
		return nil
	})
	return hits, files, err
}

// settledTotal is the number of the cloud's live resources once it serves
// no request and the count held still for 2 s (deletions finish
// asynchronously), at most 60 s.
func settledTotal(l *lab.Lab) int {
	deadline := time.Now().Add(60 * time.Second)
	last, since := -1, time.Now()
	for time.Now().Before(deadline) {
		n := l.Status().Total()
		if l.Cloud.InFlight() > 0 || n != last {
			last, since = n, time.Now()
		} else if time.Since(since) >= 2*time.Second {
			return n
		}
		time.Sleep(100 * time.Millisecond)
	}
	return l.Status().Total()
}
