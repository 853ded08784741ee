package logtail

import (
	"fmt"
	"sync"
	"testing"
)

func TestLinesAndChars(t *testing.T) {
	if got := Lines("a\nb\nc\n", 2); got != "b\nc" {
		t.Errorf("Lines: %q", got)
	}
	if got := Lines("a", 5); got != "a" {
		t.Errorf("Lines short: %q", got)
	}
	if got := Chars("abcdef", 3); got != "...def" {
		t.Errorf("Chars: %q", got)
	}
	if got := Chars("ab", 3); got != "ab" {
		t.Errorf("Chars short: %q", got)
	}
}

func TestBufferConcurrentAndCapped(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { fmt.Fprintf(&b, "%d", i) })
	}
	wg.Wait()
	if n := len(b.String()); n != 8 {
		t.Fatalf("lost writes: %q", b.String())
	}
	c := Buffer{Max: 4}
	fmt.Fprint(&c, "abc")
	fmt.Fprint(&c, "defg")
	if got := c.String(); got != "defg" {
		t.Fatalf("capped: %q", got)
	}
}
