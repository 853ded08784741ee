package cloud

import (
	"crypto/ed25519"
	"crypto/md5"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

var keyNameRE = regexp.MustCompile(`^[A-Za-z0-9 _.@-]{1,255}$`)

func fingerprint(pub ssh.PublicKey) string {
	sum := md5.Sum(pub.Marshal())
	parts := make([]string, len(sum))
	for i, b := range sum {
		parts[i] = fmt.Sprintf("%02x", b)
	}
	return strings.Join(parts, ":")
}

func (nv *nova) keypairJSON(k *keypair, mv microversion, full bool) obj {
	o := obj{"name": k.Name, "public_key": k.PublicKey, "fingerprint": k.Fingerprint}
	if mv.atLeast(2) {
		o["type"] = k.Type
	}
	if mv.atLeast(10) || full {
		o["user_id"] = k.UserID
	}
	if full {
		o["created_at"], o["deleted"], o["deleted_at"], o["updated_at"], o["id"] = tsMicro(k.Created), false, nil, nil, 1
	}
	return o
}

func (nv *nova) listKeypairs(w http.ResponseWriter, _ *http.Request, c *caller) {
	nv.mu.Lock()
	defer nv.mu.Unlock()
	out := []obj{}
	for _, k := range nv.keypairs {
		if k.UserID == c.t.user.ID {
			out = append(out, obj{"keypair": nv.keypairJSON(k, c.mv, false)})
		}
	}
	writeJSON(w, http.StatusOK, obj{"keypairs": out})
}

func (nv *nova) createKeypair(w http.ResponseWriter, r *http.Request, c *caller) {
	const svc = SvcCompute
	var b struct {
		Keypair struct {
			Name      string `json:"name"`
			PublicKey string `json:"public_key"`
			Type      string `json:"type"`
		} `json:"keypair"`
	}
	nv.mu.Lock()
	defer nv.mu.Unlock()
	if err := decodeBody(r, &b); err != nil {
		fail(w, svc, http.StatusBadRequest, "", err.Error())
		return
	}
	kb := b.Keypair
	if !keyNameRE.MatchString(kb.Name) {
		fail(w, svc, http.StatusBadRequest, "", "Invalid input for field/attribute name.")
		return
	}
	if nv.keypairs[c.t.user.ID+"/"+kb.Name] != nil {
		fail(w, svc, http.StatusConflict, "", "Key pair '"+kb.Name+"' already exists.")
		return
	}
	if kb.Type == "" {
		kb.Type = "ssh"
	}
	k := &keypair{Name: kb.Name, Type: kb.Type, UserID: c.t.user.ID, Created: time.Now()}
	private, e := k.setKey(kb.PublicKey)
	if e != nil {
		fail(w, svc, e.status, "", e.msg)
		return
	}
	nv.keypairs[c.t.user.ID+"/"+k.Name] = k
	o := nv.keypairJSON(k, c.mv, false)
	if private != "" {
		o["private_key"] = private
	}
	status := http.StatusOK
	if c.mv.atLeast(2) {
		status = http.StatusCreated
	}
	writeJSON(w, status, obj{"keypair": o})
}

// setKey imports public, or generates a key pair when it is empty and
// returns its private key, as Nova did before microversion 2.92.
func (k *keypair) setKey(public string) (private string, e *httpErr) {
	if public != "" {
		pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(public))
		if err != nil {
			return "", &httpErr{http.StatusBadRequest, "Keypair data is invalid: failed to generate fingerprint"}
		}
		k.PublicKey = strings.TrimSpace(public)
		k.Fingerprint = fingerprint(pub)
		return "", nil
	}
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return "", &httpErr{http.StatusInternalServerError, err.Error()}
	}
	blk, err := ssh.MarshalPrivateKey(priv, "Generated-by-Nova")
	if err != nil {
		return "", &httpErr{http.StatusInternalServerError, err.Error()}
	}
	k.PublicKey = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey()))) + " Generated-by-Nova"
	k.Fingerprint = fingerprint(signer.PublicKey())
	return string(pem.EncodeToMemory(blk)), nil
}

// oneKeypair looks up the path's keypair among the caller's.
func (nv *nova) oneKeypair(h func(w http.ResponseWriter, r *http.Request, c *caller, k *keypair)) routeFunc {
	return func(w http.ResponseWriter, r *http.Request, c *caller) {
		nv.mu.Lock()
		defer nv.mu.Unlock()
		k := nv.keypairs[c.t.user.ID+"/"+r.PathValue("name")]
		if k == nil {
			nv.noKeypair(w, r, c)
			return
		}
		h(w, r, c, k)
	}
}

func (nv *nova) noKeypair(w http.ResponseWriter, r *http.Request, c *caller) {
	fail(w, SvcCompute, http.StatusNotFound, "", "Keypair "+r.PathValue("name")+" not found for user "+c.t.user.ID)
}

func (nv *nova) getKeypair(w http.ResponseWriter, _ *http.Request, c *caller, k *keypair) {
	writeJSON(w, http.StatusOK, obj{"keypair": nv.keypairJSON(k, c.mv, true)})
}

func (nv *nova) deleteKeypair(w http.ResponseWriter, _ *http.Request, c *caller, k *keypair) {
	delete(nv.keypairs, c.t.user.ID+"/"+k.Name)
	if c.mv.atLeast(2) {
		w.WriteHeader(http.StatusNoContent)
	} else {
		w.WriteHeader(http.StatusAccepted)
	}
}
