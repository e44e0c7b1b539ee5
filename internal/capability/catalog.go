package capability

import (
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
)

// catalogFS holds the built-in catalog, one bundle per directory.
//
//go:embed all:catalog
var catalogFS embed.FS

var loadCatalog = sync.OnceValues(func() ([]*Bundle, error) {
	dirs, err := fs.ReadDir(catalogFS, "catalog")
	if err != nil {
		return nil, err
	}
	var out []*Bundle
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		sub, err := fs.Sub(catalogFS, "catalog/"+d.Name())
		if err != nil {
			return nil, err
		}
		b, err := Load(sub)
		if err != nil {
			return nil, fmt.Errorf("catalog/%s: %w", d.Name(), err)
		}
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b *Bundle) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return CompareVersions(a.Version, b.Version)
	})
	return out, nil
})

// Catalog returns the built-in catalog, sorted by name, then version. Its
// bundles are validated by this package's tests, so one that does not
// load is a build defect, and Catalog panics.
func Catalog() []*Bundle {
	bundles, err := loadCatalog()
	if err != nil {
		panic("capability: built-in catalog: " + err.Error())
	}
	return slices.Clone(bundles)
}

// ReservedMCPServers are MCP server names no bundle may use: the servers
// of paddock's sidecar capabilities (computer_use) have them.
var ReservedMCPServers = []string{"computer-use"}

// Newest is the newest of versions: the highest release, or the highest
// pre-release when there are only pre-releases; "" for none.
func Newest(versions []string) string {
	newest := ""
	for _, v := range versions {
		if newest == "" || isPrerelease(newest) && !isPrerelease(v) ||
			isPrerelease(newest) == isPrerelease(v) && CompareVersions(v, newest) > 0 {
			newest = v
		}
	}
	return newest
}

// FromCatalog returns a bundle of the built-in catalog. An empty version
// takes the newest release, or the newest pre-release when the name has
// only pre-releases.
func FromCatalog(name, version string) (*Bundle, bool) {
	var versions []string
	for _, b := range Catalog() {
		if b.Name == name {
			versions = append(versions, b.Version)
		}
	}
	if version == "" {
		version = Newest(versions)
	}
	for _, b := range Catalog() {
		if b.Name == name && b.Version == version {
			return b, true
		}
	}
	return nil, false
}
