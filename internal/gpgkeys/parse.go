package gpgkeys

import (
	"bytes"
	"crypto/sha1" //nolint:gosec // the v4 fingerprint is defined as SHA-1 (RFC 4880 12.2)
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// A small OpenPGP reader: just enough to check an armored public key
// block's checksum and compute its primary key's v4 fingerprint, which is
// what the built-in keys are pinned by. (golang.org/x/crypto/openpgp is
// deprecated, and a full OpenPGP library is more than this needs.)

const (
	armorBegin = "-----BEGIN PGP PUBLIC KEY BLOCK-----"
	armorEnd   = "-----END PGP PUBLIC KEY BLOCK-----"
)

// Dearmor returns the binary packets of an armored public key block,
// after checking its CRC-24 when the block carries one.
func Dearmor(armored []byte) ([]byte, error) {
	text := strings.ReplaceAll(string(armored), "\r\n", "\n")
	start := strings.Index(text, armorBegin)
	if start < 0 {
		return nil, errors.New("no " + armorBegin + " line")
	}
	body, _, ok := strings.Cut(text[start+len(armorBegin):], armorEnd)
	if !ok {
		return nil, errors.New("no " + armorEnd + " line")
	}
	lines := strings.Split(strings.TrimLeft(body, " \t"), "\n")
	var b64, crc strings.Builder
	inHeaders := true
	for _, l := range lines[1:] { // lines[0] is the rest of the BEGIN line
		l = strings.TrimSpace(l)
		switch {
		case inHeaders && strings.Contains(l, ": "):
			continue // Version:, Comment: ...
		case l == "":
			inHeaders = false
		case strings.HasPrefix(l, "=") && len(l) == 5:
			crc.WriteString(l[1:])
			inHeaders = false
		default:
			inHeaders = false
			b64.WriteString(l)
		}
	}
	data, err := base64.StdEncoding.DecodeString(b64.String())
	if err != nil {
		return nil, fmt.Errorf("armor: %v", err)
	}
	if len(data) == 0 {
		return nil, errors.New("armor: empty block")
	}
	if crc.Len() > 0 {
		want, err := base64.StdEncoding.DecodeString(crc.String())
		if err != nil || len(want) != 3 {
			return nil, errors.New("armor: bad checksum line")
		}
		var got [4]byte
		binary.BigEndian.PutUint32(got[:], crc24(data)) // a 24-bit sum: the low three bytes
		if !bytes.Equal(want, got[1:]) {
			return nil, errors.New("armor: checksum mismatch (the block is corrupted)")
		}
	}
	return data, nil
}

// crc24 is the armor checksum (RFC 4880 6.1).
func crc24(data []byte) uint32 {
	crc := uint32(0xB704CE)
	for _, b := range data {
		crc ^= uint32(b) << 16
		for i := 0; i < 8; i++ {
			crc <<= 1
			if crc&0x1000000 != 0 {
				crc ^= 0x1864CFB
			}
		}
	}
	return crc & 0xFFFFFF
}

// firstPacket returns the tag and body of the first packet.
func firstPacket(data []byte) (tag byte, body []byte, err error) {
	if len(data) < 2 || data[0]&0x80 == 0 {
		return 0, nil, errors.New("not an OpenPGP packet")
	}
	var n, hdr int
	if data[0]&0x40 != 0 { // new format
		tag = data[0] & 0x3F
		switch l := int(data[1]); {
		case l < 192:
			n, hdr = l, 2
		case l < 224 && len(data) >= 3:
			n, hdr = (l-192)<<8+int(data[2])+192, 3
		case l == 255 && len(data) >= 6:
			n, hdr = int(data[2])<<24|int(data[3])<<16|int(data[4])<<8|int(data[5]), 6
		default:
			return 0, nil, errors.New("unsupported packet length")
		}
	} else { // old format
		tag = (data[0] >> 2) & 0x0F
		switch data[0] & 3 {
		case 0:
			n, hdr = int(data[1]), 2
		case 1:
			if len(data) < 3 {
				return 0, nil, errors.New("truncated packet header")
			}
			n, hdr = int(data[1])<<8|int(data[2]), 3
		case 2:
			if len(data) < 5 {
				return 0, nil, errors.New("truncated packet header")
			}
			n, hdr = int(data[1])<<24|int(data[2])<<16|int(data[3])<<8|int(data[4]), 5
		default:
			return 0, nil, errors.New("indeterminate packet length")
		}
	}
	if n < 0 || hdr+n > len(data) {
		return 0, nil, errors.New("truncated packet")
	}
	return tag, data[hdr : hdr+n], nil
}

// Check reports whether armored is an armored public key block whose
// checksum matches and whose first packet is a public key (any version).
func Check(armored []byte) error {
	data, err := Dearmor(armored)
	if err != nil {
		return err
	}
	tag, _, err := firstPacket(data)
	if err != nil {
		return err
	}
	if tag != 6 {
		return fmt.Errorf("first packet has tag %d, not a public key (6)", tag)
	}
	return nil
}

// Fingerprint is the v4 fingerprint of the block's primary key,
// upper-case hex without spaces.
func Fingerprint(armored []byte) (string, error) {
	if err := Check(armored); err != nil {
		return "", err
	}
	data, _ := Dearmor(armored)
	_, body, _ := firstPacket(data)
	if len(body) == 0 {
		return "", errors.New("empty public key packet")
	}
	if body[0] != 4 {
		return "", fmt.Errorf("public key version %d: only v4 keys are read", body[0])
	}
	if len(body) > 0xffff {
		return "", errors.New("public key packet longer than a v4 fingerprint's two-byte length")
	}
	h := sha1.New()                                              //nolint:gosec // see import
	h.Write([]byte{0x99, byte(len(body) >> 8), byte(len(body))}) //nolint:gosec // len(body) <= 0xffff, checked above
	h.Write(body)
	return fmt.Sprintf("%X", h.Sum(nil)), nil
}
