package redact

import (
	"fmt"
	"io"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
)

// UI wraps ui so every message, prompt and machine-readable line it is
// given is redacted first. It spells out each method rather than embedding
// ui, so a method added to packersdk.Ui fails to compile here instead of
// passing text through unfiltered.
func UI(ui packersdk.Ui) packersdk.Ui {
	if r, ok := ui.(redactingUI); ok {
		return r
	}
	return redactingUI{ui: ui}
}

type redactingUI struct{ ui packersdk.Ui }

var _ packersdk.Ui = redactingUI{}

func (r redactingUI) Ask(q string) (string, error) { return r.ui.Ask(String(q)) }

func (r redactingUI) Askf(q string, args ...any) (string, error) {
	return r.ui.Ask(String(fmt.Sprintf(q, args...)))
}

func (r redactingUI) Say(msg string) { r.ui.Say(String(msg)) }

func (r redactingUI) Sayf(msg string, args ...any) { r.ui.Say(String(fmt.Sprintf(msg, args...))) }

func (r redactingUI) Message(msg string) { r.ui.Say(String(msg)) }

func (r redactingUI) Error(msg string) { r.ui.Error(String(msg)) }

func (r redactingUI) Errorf(msg string, args ...any) {
	r.ui.Error(String(fmt.Sprintf(msg, args...)))
}

func (r redactingUI) Machine(kind string, args ...string) {
	clean := make([]string, len(args))
	for i, a := range args {
		clean[i] = String(a)
	}
	r.ui.Machine(kind, clean...)
}

func (r redactingUI) TrackProgress(src string, current, total int64, stream io.ReadCloser) io.ReadCloser {
	return r.ui.TrackProgress(String(src), current, total, stream)
}
