// Package logtail holds what the test world's errors quote from a
// command's or a server's output: the last lines or characters of a text,
// and a buffer several goroutines may write to at once.
package logtail

import (
	"strings"
	"sync"
)

// Lines returns the last n lines of s (without the final newline).
func Lines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

// Chars returns the last n bytes of s, after "..." when it cut.
func Chars(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// Buffer is an io.Writer safe for concurrent use (a command's stdout and
// stderr, a UI's two writers). With Max > 0 it keeps only the last Max
// bytes written.
type Buffer struct {
	Max int
	mu  sync.Mutex
	buf []byte
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if b.Max > 0 && len(b.buf) > b.Max {
		b.buf = b.buf[len(b.buf)-b.Max:]
	}
	return len(p), nil
}

// String returns what the buffer holds.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
