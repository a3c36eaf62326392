package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"aead.dev/minisign"
	"golang.org/x/term"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/atomicfile"
	"github.com/wasmcp/wasmcp/internal/registry"
)

// passwordEnv holds the password of a secret key, for scripts; without
// it, keygen and sign ask on the terminal.
const passwordEnv = "WASMCP_KEY_PASSWORD"

func runKeygen(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("keygen", flag.ContinueOnError)
	unencrypted := fs.Bool("W", false, "leave the secret key unencrypted, with no password (as minisign -W)")
	force := fs.Bool("f", false, "overwrite NAME.key and NAME.pub if they exist (as minisign -f)")
	if code, ok := parse(ctx, fs, args, stderr, "[-W] [-f] NAME\n\nWrites a minisign key pair: NAME.key, the secret key that `wasmcp sign` signs\nwith, encrypted with a password ("+passwordEnv+", or asked on the terminal)\nunless -W; and NAME.pub, the public key a policy names to require\nsignatures by it. `minisign -S -s NAME.key` signs with it too."); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	name := strings.TrimSuffix(fs.Arg(0), ".key")
	pub, err := keygen(name, *unencrypted, *force, stdin, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "wasmcp keygen:", err)
		return exitFailure
	}
	fmt.Fprintf(stdout, "wrote the secret key %s.key (keep it secret) and the public key %s.pub\nrequire signatures by it in the policy:\n\nsignatures:\n  keys:\n    %s: %s\n  require: [%s]\n", name, name, filepath.Base(name), pub, filepath.Base(name))
	return exitOK
}

// keygen writes name.key and name.pub and returns the public key.
func keygen(name string, unencrypted, force bool, stdin io.Reader, stderr io.Writer) (minisign.PublicKey, error) {
	if !force {
		for _, f := range []string{name + ".key", name + ".pub"} {
			if _, err := os.Lstat(f); !errors.Is(err, fs.ErrNotExist) {
				return minisign.PublicKey{}, fmt.Errorf("%s exists: -f overwrites it", f)
			}
		}
	}
	pub, priv, err := minisign.GenerateKey(nil)
	if err != nil {
		return minisign.PublicKey{}, err
	}
	var secret []byte
	if unencrypted {
		secret, err = priv.MarshalText()
	} else {
		var password string
		if password, err = readPassword(stdin, stderr, true); err == nil {
			secret, err = minisign.EncryptKey(password, priv)
		}
	}
	if err != nil {
		return minisign.PublicKey{}, err
	}
	public, _ := pub.MarshalText() // never fails
	if err := atomicfile.Write(name+".key", append(secret, '\n'), 0o600); err != nil {
		return minisign.PublicKey{}, err
	}
	return pub, atomicfile.Write(name+".pub", append(public, '\n'), 0o644)
}

// readPassword reads a secret key's password from the environment, or
// else from the terminal, twice for a new one.
func readPassword(stdin io.Reader, stderr io.Writer, confirm bool) (string, error) {
	if p, ok := os.LookupEnv(passwordEnv); ok {
		if p == "" {
			return "", fmt.Errorf("%s is set but empty: set a password, or use a key without one (wasmcp keygen -W)", passwordEnv)
		}
		return p, nil
	}
	f, ok := stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return "", fmt.Errorf("no password: set %s, or run on a terminal to be asked (wasmcp keygen -W writes a key without one)", passwordEnv)
	}
	ask := func(prompt string) (string, error) {
		fmt.Fprint(stderr, prompt)
		p, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(stderr)
		return string(p), err
	}
	p, err := ask("Password: ")
	if err != nil || !confirm {
		return p, err
	}
	if p == "" {
		return "", errors.New("an empty password: give one, or use -W for a key without one")
	}
	again, err := ask("Password (again): ")
	if err == nil && again != p {
		err = errors.New("the passwords differ")
	}
	return p, err
}

func runSign(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sign", flag.ContinueOnError)
	keyFile := fs.String("key", "", "the secret key `file` to sign with, as wasmcp keygen or minisign -G wrote it")
	if code, ok := parse(ctx, fs, args, stderr, "--key FILE MODULE.wasm...\n\nSigns each module, and its sidecar manifest if it has one, writing\nMODULE.wasm.minisig (and STEM.manifest.json.minisig) beside them: minisign\nsignatures whose trusted comment names the file and its sha256. A policy\nthat requires signatures by the key's public key then serves the module.\nAn encrypted key's password is read from "+passwordEnv+" or the terminal."); !ok {
		return code
	}
	if *keyFile == "" || fs.NArg() == 0 {
		fs.Usage()
		return exitUsage
	}
	priv, err := readSecretKey(*keyFile, stdin, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "wasmcp sign:", err)
		return exitFailure
	}
	for _, module := range fs.Args() {
		signed, err := signModule(priv, module)
		if err != nil {
			fmt.Fprintln(stderr, "wasmcp sign:", err)
			return exitFailure
		}
		for _, f := range signed {
			fmt.Fprintf(stdout, "signed %s: %s\n", f, f+abi.SignatureSuffix)
		}
	}
	return exitOK
}

// readSecretKey reads a minisign secret key, asking for its password if
// it is encrypted.
func readSecretKey(path string, stdin io.Reader, stderr io.Writer) (minisign.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return minisign.PrivateKey{}, err
	}
	var priv minisign.PrivateKey
	if !minisign.IsEncrypted(data) {
		if err := priv.UnmarshalText(bytes.TrimSpace(data)); err != nil {
			return priv, fmt.Errorf("%s: not a minisign secret key: %w", path, err)
		}
		return priv, nil
	}
	password, err := readPassword(stdin, stderr, false)
	if err != nil {
		return priv, err
	}
	if priv, err = minisign.DecryptKey(password, bytes.TrimSpace(data)); err != nil {
		return priv, fmt.Errorf("%s: %w (a wrong password?)", path, err)
	}
	return priv, nil
}

// signModule signs the module at path and its sidecar, if it has one,
// and returns the files it signed. The sidecar is signed first: a
// server watching the directory may read the pair between the two
// writes, and then finds a new signature for the module missing rather
// than one for a sidecar it has not yet got.
func signModule(priv minisign.PrivateKey, path string) ([]string, error) {
	if !strings.HasSuffix(path, ".wasm") {
		return nil, fmt.Errorf("%s: a module's file name ends in .wasm", path)
	}
	wasm, err := registry.ReadModule(path)
	if err != nil {
		return nil, err
	}
	files := []string{path}
	sidecar := strings.TrimSuffix(path, ".wasm") + abi.SidecarSuffix
	switch data, err := os.ReadFile(sidecar); {
	case err == nil:
		if err := signFile(priv, sidecar, data); err != nil {
			return nil, err
		}
		files = []string{sidecar, path}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	return files, signFile(priv, path, wasm)
}

// signFile writes path's signature beside it, with the trusted comment
// minisign writes, and the file's sha256.
func signFile(priv minisign.PrivateKey, path string, data []byte) error {
	r := minisign.NewReader(bytes.NewReader(data))
	if _, err := io.Copy(io.Discard, r); err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	trusted := fmt.Sprintf("timestamp:%d\tfile:%s\thashed\tsha256:%s", time.Now().Unix(), filepath.Base(path), hex.EncodeToString(sum[:]))
	untrusted := fmt.Sprintf("signature from wasmcp secret key %X", priv.ID())
	return atomicfile.Write(path+abi.SignatureSuffix, r.SignWithComments(priv, trusted, untrusted), 0o644)
}
