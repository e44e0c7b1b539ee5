package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/paddockhq/paddock/pkg/client"
)

// Output formats.
const (
	outputTable = "table"
	outputJSON  = "json"
)

// printJSON prints v as indented JSON.
func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(a.env.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// done reports a verb done to id: {"<verb>": id} as JSON, else a line.
func (a *app) done(verb, format, id string) error {
	if a.output == outputJSON {
		return a.printJSON(map[string]string{verb: id})
	}
	_, err := fmt.Fprintf(a.env.Stdout, format+"\n", id)
	return err
}

// column is one column of a listing.
type column[T any] struct {
	name  string
	value func(T) string
}

// printList prints a page of a listing: a table with the given columns, or
// the page as JSON. In a table, a next page is announced on stderr.
func printList[T any](a *app, page client.List[T], cols []column[T]) error {
	if a.output == outputJSON {
		if page.Items == nil {
			page.Items = []T{}
		}
		return a.printJSON(page)
	}
	tw := a.table(2)
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	fmt.Fprintln(tw, strings.Join(names, "\t"))
	cells := make([]string, len(cols))
	for _, it := range page.Items {
		for i, c := range cols {
			cells[i] = cell(c.value(it))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := tw.flush(); err != nil {
		return err
	}
	if page.NextCursor != "" {
		fmt.Fprintf(a.env.Stderr, "more results: pass --cursor %s\n", page.NextCursor)
	}
	return nil
}

// field is one line of an object's details.
type field struct {
	name, value string
}

// printObject prints one object: its fields as "NAME: value" lines, or
// the object as JSON.
func (a *app) printObject(v any, fields []field) error {
	if a.output == outputJSON {
		return a.printJSON(v)
	}
	tw := a.table(1)
	for _, f := range fields {
		fmt.Fprintf(tw, "%s:\t%s\n", f.name, cell(f.value))
	}
	return tw.flush()
}

// tableWriter aligns a table's columns in memory; flush writes the whole
// table to stdout at once. A table written cell by cell would meet a
// reader that stopped early (grep -q) halfway, and paddock would die of
// SIGPIPE with status 141 after the reader had what it wanted.
type tableWriter struct {
	*tabwriter.Writer
	buf bytes.Buffer
	out io.Writer
}

// table starts a table on stdout whose columns are padding spaces apart.
func (a *app) table(padding int) *tableWriter {
	t := &tableWriter{out: a.env.Stdout}
	t.Writer = tabwriter.NewWriter(&t.buf, 0, 4, padding, ' ', 0)
	return t
}

// flush aligns the table and writes it in one write.
func (t *tableWriter) flush() error {
	if err := t.Writer.Flush(); err != nil {
		return err
	}
	_, err := t.out.Write(t.buf.Bytes())
	return err
}

// cell makes a value safe for one table cell: never empty, never holding
// a tab or a line break that would break the columns.
func cell(s string) string {
	if s == "" {
		return "-"
	}
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

// ts formats a time in UTC to the second.
func ts(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// tsp formats an optional time.
func tsp(t *time.Time) string {
	if t == nil {
		return ""
	}
	return ts(*t)
}

// credits formats an amount of credits.
func credits(v float64) string {
	return strconv.FormatFloat(v, 'f', 4, 64)
}

// short cuts an id to n characters, as docker does for container ids.
func short(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func itoa(v int64) string {
	if v == 0 {
		return ""
	}
	return strconv.FormatInt(v, 10)
}

// cpus formats milli-CPUs as a number of CPUs.
func cpus(millis int64) string {
	if millis == 0 {
		return ""
	}
	return strconv.FormatFloat(float64(millis)/1000, 'f', -1, 64)
}

// mem formats megabytes.
func mem(mb int64) string {
	if mb == 0 {
		return ""
	}
	return strconv.FormatInt(mb, 10) + "M"
}

// secs formats a number of seconds as a duration.
func secs(s int64) string {
	if s == 0 {
		return ""
	}
	return (time.Duration(s) * time.Second).String()
}
