package backup

import (
	"context"
	"io"
)

// BackupPausing is Backup calling after once each table is written.
func BackupPausing(ctx context.Context, l Location, w io.Writer, after func(table string)) (Manifest, error) {
	return backup(ctx, l, w, hooks{afterTable: after})
}
