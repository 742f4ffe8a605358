package pebblestate

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/skewerhq/skewer/internal/wire"
)

// ErrCorruptSnapshot reports a snapshot that does not match its
// reference: a file missing, of another size or checksum, or a reference
// that does not decode. A restore from it is refused, the database left
// as it was.
var ErrCorruptSnapshot = errors.New("pebblestate: corrupt snapshot")

// castagnoli is the CRC-32C table, as the runtime's checkpoints use.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// snapFile is one file of a snapshot as its reference records it.
type snapFile struct {
	name string
	size int64
	crc  uint32
}

// snapRef is a snapshot reference: the snapshot's number and every file
// of its directory.
type snapRef struct {
	n     uint64
	files []snapFile
}

const (
	refMagic   = 'P'
	refVersion = 1
	// maxSnapName bounds a file name in a reference.
	maxSnapName = 255
)

// appendRef appends r's encoding: the magic 'P', version 1, the number,
// the file count and each file's name, size and CRC-32C.
func appendRef(dst []byte, r snapRef) []byte {
	dst = append(dst, refMagic, refVersion)
	dst = wire.AppendUvarint(dst, r.n)
	dst = wire.AppendUvarint(dst, uint64(len(r.files)))
	for _, f := range r.files {
		dst = wire.AppendString(dst, f.name)
		dst = wire.AppendUvarint(dst, uint64(f.size))
		dst = append(dst, byte(f.crc), byte(f.crc>>8), byte(f.crc>>16), byte(f.crc>>24))
	}
	return dst
}

// decodeRef decodes a reference appendRef wrote; anything else is an
// error wrapping ErrCorruptSnapshot.
func decodeRef(b []byte) (snapRef, error) {
	if len(b) < 2 || b[0] != refMagic {
		if len(b) > 0 && b[0] >= '0' && b[0] <= '9' {
			return snapRef{}, fmt.Errorf("%w: reference %q names a snapshot without its files (an older encoding): it cannot be verified", ErrCorruptSnapshot, b)
		}
		return snapRef{}, fmt.Errorf("%w: reference of %d bytes is not a snapshot reference", ErrCorruptSnapshot, len(b))
	}
	if b[1] != refVersion {
		return snapRef{}, fmt.Errorf("%w: reference version %d, want %d", ErrCorruptSnapshot, b[1], refVersion)
	}
	rd := wire.NewReader(b[2:])
	r := snapRef{n: rd.Uvarint("snapshot")}
	n := rd.Count(6, "files")
	seen := make(map[string]bool, n)
	for range n {
		f := snapFile{name: rd.String(maxSnapName, "file name")}
		size := rd.Uvarint("size")
		f.crc = rd.Fixed32("crc")
		switch {
		case f.name == "" || f.name == "." || f.name == ".." || strings.ContainsAny(f.name, `/\`):
			rd.Fail("file name %q", f.name)
		case seen[f.name]:
			rd.Fail("file %q twice", f.name)
		case size > 1<<62:
			rd.Fail("file %q of %d bytes", f.name, size)
		}
		seen[f.name] = true
		f.size = int64(size)
		r.files = append(r.files, f)
	}
	if err := rd.Done(); err != nil {
		return snapRef{}, fmt.Errorf("%w: reference: %w", ErrCorruptSnapshot, err)
	}
	return r, nil
}

// checksumFile returns the size and CRC-32C of the regular file at path.
func checksumFile(path string) (int64, uint32, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	if !fi.Mode().IsRegular() {
		return 0, 0, fmt.Errorf("%s is not a regular file", path)
	}
	h := crc32.New(castagnoli)
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, 0, err
	}
	return n, h.Sum32(), nil
}

// describe lists the files of snapshot directory dir with their sizes and
// checksums. An sstable, never modified once written, is read once per
// store lineage (sums caches it by name and size); the other files
// (manifest, options, CURRENT) every time.
func describe(dir string, sums map[string]snapFile) ([]snapFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	files := make([]snapFile, 0, len(ents))
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		name := e.Name()
		sst := strings.HasSuffix(name, ".sst")
		if sst {
			if fi, err := e.Info(); err == nil {
				if c, ok := sums[name]; ok && c.size == fi.Size() {
					files = append(files, c)
					continue
				}
			}
		}
		size, crc, err := checksumFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		f := snapFile{name: name, size: size, crc: crc}
		if sst {
			sums[name] = f
		}
		files = append(files, f)
	}
	return files, nil
}

// verify checks every file r lists in snapshot directory dir: present,
// regular, of the recorded size and checksum. Its error wraps
// ErrCorruptSnapshot.
func verify(dir string, r snapRef) error {
	for _, f := range r.files {
		size, crc, err := checksumFile(filepath.Join(dir, f.name))
		if err != nil {
			return fmt.Errorf("%w: snapshot %d: %w", ErrCorruptSnapshot, r.n, err)
		}
		if size != f.size || crc != f.crc {
			return fmt.Errorf("%w: snapshot %d file %s: %d bytes, checksum %08x, want %d bytes, %08x", ErrCorruptSnapshot, r.n, f.name, size, crc, f.size, f.crc)
		}
	}
	return nil
}
