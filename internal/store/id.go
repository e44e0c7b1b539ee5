package store

import "github.com/google/uuid"

// IsID says whether s has the shape of the ids records carry: a UUID in
// its 36-character form. Callers that take either an id or a name use it
// to tell them apart.
func IsID(s string) bool {
	if len(s) != 36 {
		return false
	}
	_, err := uuid.Parse(s)
	return err == nil
}
