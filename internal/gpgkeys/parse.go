package gpgkeys

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// primary reads the first key of an armored public key block with
// ProtonMail's OpenPGP library (golang.org/x/crypto/openpgp is frozen).
// The whole first entity is read, its identities' self-signatures
// verified: the armor's CRC-24 is optional under RFC 9580 and the library
// skips it, so a corrupted block is caught by its signatures instead.
func primary(armored []byte) (*openpgp.Entity, error) {
	block, err := armor.Decode(bytes.NewReader(armored))
	if errors.Is(err, io.EOF) {
		return nil, errors.New("no -----BEGIN PGP PUBLIC KEY BLOCK----- line")
	}
	if err != nil {
		return nil, fmt.Errorf("armor: %v", err)
	}
	if block.Type != openpgp.PublicKeyType {
		return nil, fmt.Errorf("armored %q, not a %q", block.Type, openpgp.PublicKeyType)
	}
	e, err := openpgp.ReadEntity(packet.NewReader(block.Body))
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, errors.New("the block is empty or truncated")
	}
	if err != nil {
		return nil, fmt.Errorf("the first key does not read whole (a corrupted block, or a key without a self-signed identity): %v", err)
	}
	return e, nil
}

// Check reports whether armored is an armored public key block whose
// first key reads whole, with a valid self-signed identity.
func Check(armored []byte) error {
	_, err := primary(armored)
	return err
}

// Fingerprint is the fingerprint of the block's primary key, upper-case
// hex without spaces.
func Fingerprint(armored []byte) (string, error) {
	e, err := primary(armored)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%X", e.PrimaryKey.Fingerprint), nil
}
