package fetch

import (
	"fmt"
	"io"
	"time"
)

// progressReader says how far a download got, at most once every
// interval: a long download shows it is alive without flooding the
// output.
type progressReader struct {
	r     io.Reader
	total int64 // -1 when unknown
	name  string
	every time.Duration
	say   func(string)
	n     int64
	last  time.Time
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n += int64(n)
	if now := time.Now(); now.Sub(p.last) >= p.every {
		p.last = now
		p.say(p.line())
	}
	return n, err
}

func (p *progressReader) line() string {
	if p.total > 0 {
		return fmt.Sprintf("%s: %s of %s (%d%%)", p.name, mib(p.n), mib(p.total), p.n*100/p.total)
	}
	return fmt.Sprintf("%s: %s", p.name, mib(p.n))
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
