package sqlite

import (
	"testing"
	"testing/fstest"
)

func TestEmbeddedMigrationsAreNumbered(t *testing.T) {
	ms, err := loadMigrations(migrationFS)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 || ms[0].Name != "0001_init.sql" {
		t.Fatalf("migrations = %v, want 0001_init.sql first", ms)
	}
}

func TestLoadMigrations(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	cases := []struct {
		name     string
		files    fstest.MapFS
		want     []int
		wantFail bool
	}{
		{"ordered by number, not name", fstest.MapFS{
			"migrations/0002_b.sql": file("B"),
			"migrations/0001_a.sql": file("A"),
			"migrations/0010_j.sql": file("J"),
			"migrations/0003_c.sql": file("C"), "migrations/0004_d.sql": file("D"),
			"migrations/0005_e.sql": file("E"), "migrations/0006_f.sql": file("F"),
			"migrations/0007_g.sql": file("G"), "migrations/0008_h.sql": file("H"),
			"migrations/0009_i.sql": file("I"),
			"migrations/README.md":  file("ignored"),
		}, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, false},
		{"empty", fstest.MapFS{}, nil, false},
		{"gap", fstest.MapFS{"migrations/0001_a.sql": file("A"), "migrations/0003_c.sql": file("C")}, nil, true},
		{"duplicate", fstest.MapFS{"migrations/0001_a.sql": file("A"), "migrations/1_b.sql": file("B")}, nil, true},
		{"starts at two", fstest.MapFS{"migrations/0002_b.sql": file("B")}, nil, true},
		{"no number", fstest.MapFS{"migrations/init.sql": file("A")}, nil, true},
		{"zero", fstest.MapFS{"migrations/0000_a.sql": file("A")}, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := loadMigrations(tc.files)
			if tc.wantFail {
				if err == nil {
					t.Fatalf("loadMigrations accepted %v", ms)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, m := range ms {
				got = append(got, m.Version)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("versions = %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("versions = %v, want %v", got, tc.want)
				}
			}
		})
	}
}
