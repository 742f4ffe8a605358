package checkpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/skewerhq/skewer/internal/wire"
)

// ErrCorrupt reports a manifest or a file that fails to decode or verify:
// damaged, truncated, or written by something else.
var ErrCorrupt = errors.New("checkpoint: corrupt")

// castagnoli is the CRC-32C table (hardware-accelerated on amd64 and arm64).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum is the CRC-32C of b, as manifests record it.
func Checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// Stage is one stage of the job a checkpoint belongs to.
type Stage struct {
	Name    string
	Workers int
}

// File is one file of a checkpoint, as its manifest records it.
type File struct {
	Name string
	Size int64
	CRC  uint32
}

// Manifest describes a complete checkpoint: its id, the job's stages, and
// every file with its size and checksum. End marks an end-of-input
// checkpoint: the one a job writes when every worker has ended, so that
// a store whose newest checkpoint has it holds a job that finished.
type Manifest struct {
	ID     uint64
	Stages []Stage
	Files  []File
	End    bool
}

const (
	manifestMagic   = "SKCP"
	manifestVersion = 2
	// manifestEnd is the flag of an end-of-input checkpoint (version 2).
	manifestEnd = 1
	// maxName bounds a stage or file name in a manifest.
	maxName = 4096
	// maxWorkers bounds a stage's parallelism in a manifest.
	maxWorkers = 1 << 20
)

// AppendBinary appends m's encoding to dst.
func (m *Manifest) AppendBinary(dst []byte) ([]byte, error) {
	start := len(dst)
	dst = append(dst, manifestMagic...)
	dst = append(dst, manifestVersion)
	dst = wire.AppendUvarint(dst, m.ID)
	var flags byte
	if m.End {
		flags |= manifestEnd
	}
	dst = append(dst, flags)
	dst = wire.AppendUvarint(dst, uint64(len(m.Stages)))
	for _, s := range m.Stages {
		if len(s.Name) > maxName || s.Workers < 1 || s.Workers > maxWorkers {
			return nil, fmt.Errorf("%w: stage %q with %d workers", ErrInvalidParameter, s.Name, s.Workers)
		}
		dst = wire.AppendString(dst, s.Name)
		dst = wire.AppendUvarint(dst, uint64(s.Workers))
	}
	dst = wire.AppendUvarint(dst, uint64(len(m.Files)))
	for _, f := range m.Files {
		if len(f.Name) > maxName || f.Size < 0 {
			return nil, fmt.Errorf("%w: file %q of %d bytes", ErrInvalidParameter, f.Name, f.Size)
		}
		dst = wire.AppendString(dst, f.Name)
		dst = wire.AppendUvarint(dst, uint64(f.Size))
		dst = binary.LittleEndian.AppendUint32(dst, f.CRC)
	}
	return binary.LittleEndian.AppendUint32(dst, Checksum(dst[start:])), nil
}

// UnmarshalBinary decodes a manifest; it returns an error wrapping
// ErrCorrupt, leaving m unchanged, for bytes AppendBinary cannot have
// written (a checksum mismatch included).
func (m *Manifest) UnmarshalBinary(b []byte) error {
	if len(b) < len(manifestMagic)+1+4 {
		return fmt.Errorf("%w: manifest of %d bytes", ErrCorrupt, len(b))
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if Checksum(body) != sum {
		return fmt.Errorf("%w: manifest checksum", ErrCorrupt)
	}
	if string(body[:4]) != manifestMagic {
		return fmt.Errorf("%w: manifest magic %q", ErrCorrupt, body[:4])
	}
	v := body[4]
	if v < 1 || v > manifestVersion {
		return fmt.Errorf("%w: manifest version %d, want 1 to %d", ErrCorrupt, v, manifestVersion)
	}
	r := wire.NewReader(body[5:])
	next := Manifest{ID: r.Uvarint("id")}
	if v >= 2 {
		flags := r.Byte("flags")
		if flags&^manifestEnd != 0 && r.Err() == nil {
			r.Fail("flags %#x", flags)
		}
		next.End = flags&manifestEnd != 0
	}
	n := r.Count(2, "stages")
	for range n {
		s := Stage{Name: r.String(maxName, "stage name"), Workers: r.Int(maxWorkers, "workers")}
		if s.Workers < 1 {
			r.Fail("stage %q with no worker", s.Name)
		}
		next.Stages = append(next.Stages, s)
	}
	n = r.Count(6, "files")
	seen := make(map[string]bool, n)
	for range n {
		f := File{Name: r.String(maxName, "file name")}
		size := r.Uvarint("size")
		f.CRC = r.Fixed32("crc")
		if size > 1<<62 {
			r.Fail("file %q of %d bytes", f.Name, size)
		}
		if seen[f.Name] {
			r.Fail("file %q twice", f.Name)
		}
		seen[f.Name] = true
		f.Size = int64(size)
		next.Files = append(next.Files, f)
	}
	if err := r.Done(); err != nil {
		return fmt.Errorf("%w: manifest: %w", ErrCorrupt, err)
	}
	*m = next
	return nil
}
