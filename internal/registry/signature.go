package registry

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"aead.dev/minisign"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/policy"
)

// MaxSignatureSize bounds a signature file: minisign writes about 300
// bytes, most of them its two comments.
const MaxSignatureSize = 4 << 10

// signedFile is one file of a module as verifying it needs it: its
// name, the digest of its bytes, and the signature found beside it.
type signedFile struct {
	// name is the file's base name, which its signature's trusted
	// comment must name.
	name string
	// digest has read the file's bytes: it keeps their BLAKE2b-512
	// digest, which a minisign signature signs, and not the bytes, so that
	// a reload can verify the file again under another policy without
	// holding or reading it. nil when there is no signature.
	digest *minisign.Reader
	// sig is the signature file's content; nil if there is none.
	sig []byte
	// err says why the signature file could not be read.
	err error
}

// signatures are the files of one module as loaded: the module, then its
// sidecar manifest if it has one (the sidecar says what the model reads
// and the limits, so it is signed too). A load makes them once; a reload
// that does not read the files again keeps the same.
type signatures struct {
	files []signedFile
}

// readSignature reads the signature of the file at path whose content is
// data, and keeps the file's digest if there is one. A signature file
// that cannot be read is not an error of the load: it matters only to a
// policy that requires a signature, and the verification reports it.
func readSignature(path string, data []byte) (signedFile, fileID) {
	f := signedFile{name: filepath.Base(path)}
	sig, fi, err := readRegular(path+abi.SignatureSuffix, MaxSignatureSize)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return f, fileID{}
	case err != nil:
		f.err = err
		return f, fileID{}
	}
	id, _ := statID(fi)
	f.sig = sig
	// io.MultiReader lets go of the bytes at their end, so the digest
	// keeps no reference to them.
	f.digest = minisign.NewReader(io.MultiReader(bytes.NewReader(data)))
	_, _ = io.Copy(io.Discard, f.digest) // reading memory fails never
	return f, id
}

// verify reports why the module's files are not signed as pol requires of
// the module with the given stem, or nil if they are or it requires
// nothing. module is the module's file name, for the command to run.
func (s *signatures) verify(pol *policy.Policy, stem, module string) error {
	keys := pol.Signers(stem)
	if len(keys) == 0 {
		return nil
	}
	if s == nil || len(s.files) == 0 {
		return fmt.Errorf("no signature by %s over %s: its files were not read", policy.KeyNames(keys), module)
	}
	for _, f := range s.files {
		if err := f.verify(keys, module); err != nil {
			return err
		}
	}
	return nil
}

// verify checks that a signature by one of keys verifies over the file:
// its signature, its trusted comment, and that the comment names the
// file, so that a signed file cannot stand in for another (a signed
// sidecar beside another module).
func (f signedFile) verify(keys []policy.NamedKey, module string) error {
	by := policy.KeyNames(keys)
	again := fmt.Sprintf("sign it with wasmcp sign --key %s.key %s", keys[0].Name, module)
	sigName := f.name + abi.SignatureSuffix
	if f.err != nil {
		return fmt.Errorf("no signature by %s over %s: %s cannot be read (%w); %s", by, f.name, sigName, f.err, again)
	}
	if f.sig == nil {
		return fmt.Errorf("no signature by %s over %s (%s is missing); %s", by, f.name, sigName, again)
	}
	var sig minisign.Signature
	if err := sig.UnmarshalText(f.sig); err != nil {
		return fmt.Errorf("no signature by %s over %s: %s is not a minisign signature (%w); %s", by, f.name, sigName, err, again)
	}
	if sig.Algorithm != minisign.HashEdDSA {
		return fmt.Errorf("no signature by %s over %s: %s is a legacy minisign signature (minisign -S -l), which this server does not verify; %s", by, f.name, sigName, again)
	}
	for _, k := range keys {
		if k.Key.ID() != sig.KeyID {
			continue
		}
		if !f.digest.Verify(k.Key, f.sig) {
			return fmt.Errorf("%s does not verify with key %q: %s or the signature's trusted comment changed after it was signed; %s", sigName, k.Name, f.name, again)
		}
		if !namesFile(sig.TrustedComment, f.name) {
			return fmt.Errorf("%s is by key %q but was made for another file: its trusted comment names no file:%s; %s", sigName, k.Name, f.name, again)
		}
		return nil
	}
	return fmt.Errorf("no signature by %s over %s: %s is by another key (ID %X); %s", by, f.name, sigName, sig.KeyID, again)
}

// namesFile reports whether a trusted comment names the file, as a
// tab-separated field file:NAME, which is how both `wasmcp sign` and
// `minisign -S` write it.
func namesFile(comment, name string) bool {
	for field := range strings.SplitSeq(comment, "\t") {
		if field == "file:"+name {
			return true
		}
	}
	return false
}

// CheckSignatures reports why the files of m, a module of c, are not
// signed as p requires, or nil if they are or p requires nothing: whether
// a catalog under p would serve m.
func (c *Catalog) CheckSignatures(m *Module, p *policy.Policy) error {
	return c.sigs[m.Path].verify(p, m.Stem, filepath.Base(m.Path))
}
