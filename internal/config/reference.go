package config

//go:generate go run gen_reference.go ../../docs/CONFIG.md

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
)

// ReferencePath is where the settings reference is committed, from the
// repository's root.
const ReferencePath = "docs/CONFIG.md"

// SectionNames are the names of Config's sections, in its order.
func SectionNames() []string {
	t := reflect.TypeFor[Config]()
	names := make([]string, t.NumField())
	for i := range names {
		names[i] = t.Field(i).Tag.Get("section")
	}
	return names
}

// Reference is docs/CONFIG.md: every setting, by section, with its file
// key, variable, flag, default and help, written from Settings.
func Reference() []byte {
	var b bytes.Buffer
	b.WriteString(`# Configuration reference

<!-- Generated from the tags of internal/config/sections.go by
     go generate ./internal/config; do not edit by hand. -->

` + "`paddock serve`" + ` takes each setting from its flag, else its ` + "`PADDOCK_*`" + `
environment variable, else the YAML config file (` + "`--config`" + `, default
` + "`<data-dir>/paddock.yaml`" + ` when it exists), else its default. A key with a dot
is nested in the file: ` + "`egress.proxy_port`" + ` is ` + "`proxy_port:`" + ` under ` + "`egress:`" + `.
A variable set to the empty string counts as unset. ` + "`paddock serve --help`" + `
lists the same settings.

Each section is the settings of one component of the server.
`)
	def := Default()
	all := Settings()
	for _, section := range SectionNames() {
		fmt.Fprintf(&b, "\n## %s\n\n", section)
		var rows []Setting
		for _, s := range all {
			if s.Section == section {
				rows = append(rows, s)
			}
		}
		if len(rows) == 0 {
			b.WriteString("No settings.\n")
			continue
		}
		b.WriteString("| File key | Environment | Flag | Default | Meaning |\n|---|---|---|---|---|\n")
		for _, s := range rows {
			flag := s.Flag
			if flag != "" {
				flag = "--" + flag
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n",
				code(s.Key), code(s.Env), code(flag), code(s.Format(&def)), cellEscaper.Replace(s.Help))
		}
	}
	return b.Bytes()
}

// cellEscaper keeps text in a table cell: a '|' would end it, a '<' could
// open an HTML tag.
var cellEscaper = strings.NewReplacer("|", `\|`, "<", `\<`)

// code is s as inline code in a table cell, or nothing for "".
func code(s string) string {
	if s == "" {
		return ""
	}
	return "`" + strings.ReplaceAll(s, "|", `\|`) + "`"
}
