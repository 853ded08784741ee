package ark

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// interruptible is a context that Ctrl-C cancels. Packer gives a data
// source's Execute no context, and cancelling its own build context does
// not reach the plugin; but Ctrl-C sends SIGINT to the whole process group,
// the plugin included (whose SDK server only logs it), and SIGTERM reaches
// it when Packer is stopped that way. The cause names the signal.
func interruptible(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			name := "SIGTERM"
			if sig == os.Interrupt {
				name = "SIGINT (Ctrl-C)"
			}
			cancel(fmt.Errorf("interrupted by %s", name))
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}
