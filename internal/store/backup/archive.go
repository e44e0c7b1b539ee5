package backup

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// FormatVersion is the version of the backup file's layout this build
// writes and reads.
const FormatVersion = 1

// manifestName is the archive's first entry; each table follows in
// Tables' order as tables/<name>.jsonl.
const manifestName = "manifest.json"

// Manifest describes a backup: what made it, at which schema, and what it
// holds, so a restore can refuse it before it writes anything and check
// what it wrote.
type Manifest struct {
	Format        int              `json:"format"`
	Dialect       string           `json:"dialect"`        // "sqlite" or "postgres": the store backed up
	SchemaVersion int64            `json:"schema_version"` // the number of migrations applied
	CreatedAt     time.Time        `json:"created_at"`
	InstanceID    string           `json:"instance_id"`
	Rows          map[string]int64 `json:"rows"`
	Ledger        Sums             `json:"ledger"`
	// SecretsKey is the secrets key's fingerprint (secrets.KeyID, the id
	// each sealed secret names), "" when the installation had no key.
	SecretsKey string `json:"secrets_key_fingerprint,omitempty"`
}

// tableHeader is the first line of a table's file.
type tableHeader struct {
	Table   string   `json:"table"`
	Columns []Column `json:"columns"`
}

// archiveWriter writes a backup file: a gzip'd tar.
type archiveWriter struct {
	gz *gzip.Writer
	tw *tar.Writer
	at time.Time
}

func newArchiveWriter(w io.Writer, at time.Time) *archiveWriter {
	gz := gzip.NewWriter(w)
	return &archiveWriter{gz: gz, tw: tar.NewWriter(gz), at: at}
}

// add writes one entry; its content is spooled to a temporary file first,
// since a tar header carries the size.
func (a *archiveWriter) add(name string, write func(w io.Writer) error) error {
	f, err := os.CreateTemp("", "paddock-backup-*")
	if err != nil {
		return err
	}
	defer func() { _ = f.Close(); _ = os.Remove(f.Name()) }()
	bw := bufio.NewWriter(f)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := a.tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: size, ModTime: a.at, Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	_, err = io.Copy(a.tw, f)
	return err
}

// table writes one table's file: its header line, then one JSON array a
// row (an int or a time as a number, bytes as base64, a flag as a
// boolean or 0/1 as the source stores it, NULL as null).
func (a *archiveWriter) table(ctx context.Context, src Tx, table string) (int64, error) {
	cols, err := src.columns(ctx, table)
	if err != nil {
		return 0, err
	}
	rows, done, err := src.rows(ctx, table, cols)
	if err != nil {
		return 0, err
	}
	defer done()
	var n int64
	err = a.add("tables/"+table+".jsonl", func(w io.Writer) error {
		enc := json.NewEncoder(w)
		if err := enc.Encode(tableHeader{Table: table, Columns: cols}); err != nil {
			return err
		}
		for rows.Next() {
			if err := enc.Encode(rows.Values()); err != nil {
				return err
			}
			n++
		}
		return rows.Err()
	})
	return n, err
}

func (a *archiveWriter) close() error {
	if err := a.tw.Close(); err != nil {
		return err
	}
	return a.gz.Close()
}

// archiveReader reads a backup file entry by entry.
type archiveReader struct {
	gz *gzip.Reader
	tr *tar.Reader
}

// unreadable is the error of a backup file that is damaged, cut short or
// not a backup.
func unreadable(err error) error {
	return errdefs.InvalidArgument("backup_unreadable", "the backup file is damaged, cut short or not a paddock backup: %v", err).WithCause(err)
}

// openArchive reads the manifest at the start of a backup file.
func openArchive(r io.Reader) (*archiveReader, Manifest, error) {
	var m Manifest
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, m, unreadable(err)
	}
	a := &archiveReader{gz: gz, tr: tar.NewReader(gz)}
	h, err := a.tr.Next()
	if err != nil {
		return nil, m, unreadable(err)
	}
	if h.Name != manifestName {
		return nil, m, unreadable(fmt.Errorf("its first entry is %q, not %s", h.Name, manifestName))
	}
	if err := json.NewDecoder(a.tr).Decode(&m); err != nil {
		return nil, m, unreadable(fmt.Errorf("manifest: %w", err))
	}
	if m.Format != FormatVersion {
		return nil, m, errdefs.InvalidArgument("backup_format_unknown",
			"the backup file has format %d; this paddock reads format %d", m.Format, FormatVersion)
	}
	return a, m, nil
}

// next opens the next table's file, which must be table's.
func (a *archiveReader) next(table string) (*fileTable, error) {
	h, err := a.tr.Next()
	if err != nil {
		return nil, unreadable(fmt.Errorf("looking for the table %s: %w", table, err))
	}
	if want := "tables/" + table + ".jsonl"; h.Name != want {
		return nil, unreadable(fmt.Errorf("entry %q where %s belongs", h.Name, want))
	}
	dec := json.NewDecoder(a.tr)
	dec.UseNumber()
	var hdr tableHeader
	if err := dec.Decode(&hdr); err != nil || hdr.Table != table {
		return nil, unreadable(fmt.Errorf("the header of %s: %v", table, err))
	}
	return &fileTable{dec: dec, cols: hdr.Columns}, nil
}

// end checks that nothing follows the last table and that the file's
// checksum holds.
func (a *archiveReader) end() error {
	if h, err := a.tr.Next(); err != io.EOF {
		if err == nil {
			err = fmt.Errorf("an unexpected entry %q", h.Name)
		}
		return unreadable(err)
	}
	return a.drain()
}

// drain reads the rest of the file, for its checksum: unreadable when the
// file is damaged or cut short, nil when it holds.
func (a *archiveReader) drain() error {
	if _, err := io.Copy(io.Discard, a.gz); err != nil {
		return unreadable(err)
	}
	return nil
}

// fileTable is one table's file, a source of rows.
type fileTable struct {
	dec  *json.Decoder
	cols []Column
}

func (f *fileTable) columns(context.Context, string) ([]Column, error) { return f.cols, nil }

func (f *fileTable) rows(_ context.Context, _ string, cols []Column) (Rows, func(), error) {
	return &fileRows{dec: f.dec, cols: cols}, func() {}, nil
}

// fileRows decodes a table file's rows into the neutral form.
type fileRows struct {
	dec  *json.Decoder
	cols []Column
	vals []any
	err  error
}

func (r *fileRows) Next() bool {
	if r.err != nil {
		return false
	}
	var raw []any
	if err := r.dec.Decode(&raw); err != nil {
		if !errors.Is(err, io.EOF) {
			r.err = unreadable(err)
		}
		return false
	}
	if len(raw) != len(r.cols) {
		r.err = unreadable(fmt.Errorf("a row of %d values where %d columns belong", len(raw), len(r.cols)))
		return false
	}
	r.vals = make([]any, len(raw))
	for i, c := range r.cols {
		v, err := decodeValue(raw[i], c.Kind)
		if err != nil {
			r.err = unreadable(fmt.Errorf("column %s: %w", c.Name, err))
			return false
		}
		r.vals[i] = v
	}
	return true
}

func (r *fileRows) Values() []any { return r.vals }
func (r *fileRows) Err() error    { return r.err }

// decodeValue turns a JSON value of a column of kind into the neutral
// form.
func decodeValue(v any, kind Kind) (any, error) {
	switch x := v.(type) {
	case nil, bool:
		return x, nil
	case json.Number:
		return x.Int64()
	case string:
		if kind == KindBytes {
			return base64.StdEncoding.DecodeString(x)
		}
		return x, nil
	}
	return nil, fmt.Errorf("a %T value", v)
}

// jsonTo writes v as indented JSON, for the manifest a reader may open.
func jsonTo(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Print writes what a manifest says, as the commands show it.
func (m Manifest) Print(w io.Writer) {
	var total int64
	for _, t := range Tables {
		total += m.Rows[t]
	}
	fmt.Fprintf(w, "%s store, schema version %d, instance %q, made %s\n", m.Dialect, m.SchemaVersion, m.InstanceID, m.CreatedAt.Format(time.RFC3339))
	fmt.Fprintf(w, "%d rows in %d tables; ledger: balances %d, held %d, journal sum %d, last entry %d (micro-credits)\n",
		total, len(Tables), m.Ledger.Balance, m.Ledger.Held, m.Ledger.Journal, m.Ledger.LastSeq)
	if m.SecretsKey != "" {
		fmt.Fprintf(w, "secrets sealed under the key %s (the key itself is not in the backup)\n", m.SecretsKey)
	}
}
