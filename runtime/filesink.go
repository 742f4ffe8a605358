package runtime

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/skewerhq/skewer/runtime/checkpoint"
)

// FileSink is the reference TxnSink: each worker's transactions are files
// in one directory. A transaction is written to "w<worker>-<seq>.open";
// PreCommit flushes it, fsyncs it and renames it "w<worker>-<seq>.pending"
// (its handle is seq); Commit renames the pending files up to seq to
// "w<worker>-<seq>.part" and fsyncs the directory. Readers see only the
// .part files (Files), each an append of encoded records. An empty
// transaction leaves no file. Recover refuses (ErrSinkAhead) a handle
// older than a committed file of the worker. Safe for concurrent use as TxnSink
// requires.
type FileSink[T any] struct {
	dir string
	enc func(dst []byte, v T) ([]byte, error)
	ws  []fileTxn // per worker
}

// fileTxn is one worker's open transaction.
type fileTxn struct {
	seq uint64
	f   *os.File
	w   *bufio.Writer
	buf []byte
}

// NewFileSink returns a FileSink writing in dir (created if needed) the
// encoding of each record by enc, which appends it to dst (a line, a
// length-prefixed frame: the reader's choice).
func NewFileSink[T any](dir string, workers int, enc func(dst []byte, v T) ([]byte, error)) (*FileSink[T], error) {
	switch {
	case dir == "":
		return nil, invalidParam("FileSink dir", `""`, "a directory")
	case workers < 1:
		return nil, invalidParam("FileSink workers", workers, ">= 1")
	case enc == nil:
		return nil, invalidParam("FileSink enc", "nil", "a function")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("runtime: FileSink: %w", err)
	}
	return &FileSink[T]{dir: dir, enc: enc, ws: make([]fileTxn, workers)}, nil
}

func (s *FileSink[T]) name(worker int, seq uint64, ext string) string {
	return filepath.Join(s.dir, sinkFileName(worker, seq, ext))
}

func (s *FileSink[T]) worker(w int) (*fileTxn, error) {
	if w < 0 || w >= len(s.ws) {
		return nil, invalidParam("FileSink worker", w, fmt.Sprintf("in [0, %d)", len(s.ws)))
	}
	return &s.ws[w], nil
}

// Write implements TxnSink.
func (s *FileSink[T]) Write(worker int, v T) error {
	t, err := s.worker(worker)
	if err != nil {
		return err
	}
	if t.f == nil {
		f, err := os.Create(s.name(worker, t.seq, "open"))
		if err != nil {
			return fmt.Errorf("runtime: FileSink: %w", err)
		}
		t.f = f
		if t.w == nil {
			t.w = bufio.NewWriterSize(f, 64<<10)
		} else {
			t.w.Reset(f)
		}
	}
	if t.buf, err = s.enc(t.buf[:0], v); err != nil {
		return err
	}
	_, err = t.w.Write(t.buf)
	return err
}

// PreCommit implements TxnSink.
func (s *FileSink[T]) PreCommit(worker int) ([]byte, error) {
	t, err := s.worker(worker)
	if err != nil {
		return nil, err
	}
	seq := t.seq
	t.seq++
	if t.f != nil {
		f := t.f
		t.f = nil
		err := errors.Join(t.w.Flush(), f.Sync(), f.Close())
		if err == nil {
			err = os.Rename(f.Name(), s.name(worker, seq, "pending"))
		}
		if err != nil {
			return nil, fmt.Errorf("runtime: FileSink: %w", err)
		}
	}
	return binary.LittleEndian.AppendUint64(nil, seq), nil
}

// sinkFile is a FileSink file's name parsed: "w<worker>-<seq>.<ext>".
type sinkFile struct {
	worker int
	seq    uint64
	ext    string
}

// parseSinkFile parses a FileSink file name; ok is false for any other.
func parseSinkFile(name string) (f sinkFile, ok bool) {
	rest, ok := strings.CutPrefix(name, "w")
	if !ok {
		return f, false
	}
	w, rest, ok := strings.Cut(rest, "-")
	if !ok {
		return f, false
	}
	seq, ext, ok := strings.Cut(rest, ".")
	if !ok {
		return f, false
	}
	worker, err1 := strconv.Atoi(w)
	n, err2 := strconv.ParseUint(seq, 16, 64)
	if err1 != nil || err2 != nil || worker < 0 {
		return f, false
	}
	return sinkFile{worker: worker, seq: n, ext: ext}, true
}

// sinkFiles returns the FileSink files in dir with extension ext, by
// worker, each worker's by sequence number.
func sinkFiles(dir, ext string) ([]sinkFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("runtime: FileSink: %w", err)
	}
	var out []sinkFile
	for _, e := range ents {
		if f, ok := parseSinkFile(e.Name()); ok && f.ext == ext && e.Type().IsRegular() {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b sinkFile) int { return cmp.Or(cmp.Compare(a.worker, b.worker), cmp.Compare(a.seq, b.seq)) })
	return out, nil
}

// files returns worker's sequence numbers with the given extension, in
// order.
func (s *FileSink[T]) files(worker int, ext string) ([]uint64, error) {
	all, err := sinkFiles(s.dir, ext)
	if err != nil {
		return nil, err
	}
	var seqs []uint64
	for _, f := range all {
		if f.worker == worker {
			seqs = append(seqs, f.seq)
		}
	}
	return seqs, nil
}

func decodeSeq(txn []byte) (uint64, error) {
	if len(txn) != 8 {
		return 0, fmt.Errorf("%w: FileSink transaction of %d bytes, want 8", ErrCorruptSnapshot, len(txn))
	}
	return binary.LittleEndian.Uint64(txn), nil
}

// Commit implements TxnSink.
func (s *FileSink[T]) Commit(worker int, txn []byte) error {
	if _, err := s.worker(worker); err != nil {
		return err
	}
	upTo, err := decodeSeq(txn)
	if err != nil {
		return err
	}
	return s.commit(worker, upTo)
}

func (s *FileSink[T]) commit(worker int, upTo uint64) error {
	pending, err := s.files(worker, "pending")
	if err != nil {
		return err
	}
	moved := false
	for _, seq := range pending {
		if seq > upTo {
			break
		}
		if err := os.Rename(s.name(worker, seq, "pending"), s.name(worker, seq, "part")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("runtime: FileSink: %w", err)
		}
		moved = true
	}
	if moved {
		if err := checkpoint.SyncDir(s.dir); err != nil {
			return fmt.Errorf("runtime: FileSink: %w", err)
		}
	}
	return nil
}

// Recover implements TxnSink. A worker index at or beyond the sink's
// workers, that of a worker of a checkpoint taken at higher parallelism
// (a job restored with fewer sink workers), has its files recovered: its
// checkpoint's transaction committed, the rest aborted.
func (s *FileSink[T]) Recover(worker int, txn []byte) error {
	t := &fileTxn{} // an old worker's: files only
	if worker < 0 || worker < len(s.ws) {
		var err error
		if t, err = s.worker(worker); err != nil {
			return err
		}
	}
	if t.f != nil {
		_ = t.f.Close()
		t.f = nil
	}
	var err error
	var last uint64
	has := txn != nil
	if has {
		if last, err = decodeSeq(txn); err != nil {
			return err
		}
		parts, err := s.files(worker, "part")
		if err != nil {
			return err
		}
		if n := len(parts); n > 0 && parts[n-1] > last {
			return fmt.Errorf("%w: FileSink %s worker %d committed transaction %d, the checkpoint holds %d", ErrSinkAhead, s.dir, worker, parts[n-1], last)
		}
		if err := s.commit(worker, last); err != nil {
			return err
		}
	}
	for _, ext := range []string{"pending", "open"} {
		seqs, err := s.files(worker, ext)
		if err != nil {
			return err
		}
		for _, seq := range seqs {
			if err := os.Remove(s.name(worker, seq, ext)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("runtime: FileSink: %w", err)
			}
		}
	}
	parts, err := s.files(worker, "part")
	if err != nil {
		return err
	}
	t.seq = 0
	if has {
		t.seq = last + 1
	}
	if n := len(parts); n > 0 {
		t.seq = max(t.seq, parts[n-1]+1)
	}
	return nil
}

// Files returns the committed files in the sink's directory, as
// CommittedFiles does.
func (s *FileSink[T]) Files() ([]string, error) { return CommittedFiles(s.dir) }

// CommittedOutput implements TxnSinkOutput: the number of committed
// files in the directory, if any. A FileSink cannot tell whether the job
// that committed them finished, so a job that starts fresh refuses a
// directory with any.
func (s *FileSink[T]) CommittedOutput() (string, error) {
	files, err := sinkFiles(s.dir, "part")
	if err != nil || len(files) == 0 {
		return "", err
	}
	return fmt.Sprintf("%d committed files in FileSink directory %s", len(files), s.dir), nil
}

// Workers implements TxnSinkWorkers: the workers the sink was made for.
func (s *FileSink[T]) Workers() int { return len(s.ws) }

// CommittedFiles returns the paths of the files a FileSink committed in
// dir, worker by worker, each worker's in the order of its transactions:
// the output of every worker that wrote there, a job's restored at other
// parallelism included. It needs no FileSink (nor its encoder); a missing
// dir is an error wrapping fs.ErrNotExist.
func CommittedFiles(dir string) ([]string, error) {
	if dir == "" {
		return nil, invalidParam("CommittedFiles dir", `""`, "a directory")
	}
	files, err := sinkFiles(dir, "part")
	if err != nil {
		return nil, err
	}
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = filepath.Join(dir, sinkFileName(f.worker, f.seq, f.ext))
	}
	return out, nil
}

// sinkFileName is the name of worker's file seq with extension ext.
func sinkFileName(worker int, seq uint64, ext string) string {
	return fmt.Sprintf("w%d-%016x.%s", worker, seq, ext)
}
