package config

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Setting is one setting of Config, read from its field's tags: the
// environment, the file, the flags, `paddock serve --help` and
// docs/CONFIG.md all come from the list Settings returns.
type Setting struct {
	Section string // the component whose section holds it
	Key     string // its dotted key in the file; "" for environment only
	Env     string // its PADDOCK_* variable; "" for file only
	Flag    string // its `paddock serve` flag; "" for none
	Help    string // one line

	index []int // the field's index path from Config
	parse parser
	kind  string // the value's name in --help: string, bool, int, …
}

// A parser reads a variable's text into v, a field of a Config.
type parser func(v reflect.Value, s string) error

// Settings lists every setting, in the order of Config's sections and
// their fields.
func Settings() []Setting { return slices.Clone(settings()) }

var settings = sync.OnceValue(func() []Setting {
	var out []Setting
	t := reflect.TypeFor[Config]()
	for i := range t.NumField() {
		f := t.Field(i)
		out = appendSettings(out, f.Type, f.Tag.Get("section"), "", []int{i})
	}
	return out
})

// appendSettings appends the settings of struct t, at index in Config
// and under key prefix in the file. A field that is a struct and has no
// variable of its own (egress, limits, members) is a group of settings.
func appendSettings(out []Setting, t reflect.Type, section, prefix string, index []int) []Setting {
	for i := range t.NumField() {
		f := t.Field(i)
		idx := append(append([]int(nil), index...), i)
		key := strings.Split(f.Tag.Get("yaml"), ",")[0]
		if key == "-" {
			key = ""
		} else {
			key = prefix + key
		}
		if _, hasEnv := f.Tag.Lookup("env"); !hasEnv && f.Type.Kind() == reflect.Struct {
			out = appendSettings(out, f.Type, section, key+".", idx)
			continue
		}
		s := Setting{Section: section, Key: key, Flag: f.Tag.Get("flag"), Help: f.Tag.Get("help"), index: idx}
		if env := f.Tag.Get("env"); env != "-" {
			s.Env = env
		}
		var err error
		if s.parse, s.kind, err = parserFor(f); err != nil {
			panic(err) // a field the walk cannot read is a bug in this package, found by its tests
		}
		out = append(out, s)
	}
	return out
}

// parserFor finds how field f is read, by its `parse` tag, else by its
// type, and the name of its kind of value. A file-only field needs none.
func parserFor(f reflect.StructField) (parser, string, error) {
	kind := "list"
	var byType parser
	for _, k := range typeParsers {
		if k.t == f.Type {
			kind, byType = k.kind, k.parse
		}
	}
	if name := f.Tag.Get("parse"); name != "" {
		p, ok := namedParsers[name]
		if !ok {
			return nil, "", fmt.Errorf("config: field %s: no parser %q", f.Name, name)
		}
		return p, kind, nil
	}
	if f.Tag.Get("env") == "-" {
		return nil, "", nil
	}
	if byType == nil {
		return nil, "", fmt.Errorf("config: field %s: no parser for %s", f.Name, f.Type)
	}
	return byType, kind, nil
}

// typeParsers read the kinds of value settings have; each error is
// prefixed with the variable's name.
var typeParsers = []struct {
	t     reflect.Type
	kind  string
	parse parser
}{
	{reflect.TypeFor[string](), "string", func(v reflect.Value, s string) error { v.SetString(s); return nil }},
	{reflect.TypeFor[bool](), "bool", func(v reflect.Value, s string) error {
		b, err := strconv.ParseBool(s)
		v.SetBool(b)
		return err
	}},
	{reflect.TypeFor[int](), "int", func(v reflect.Value, s string) error {
		n, err := strconv.Atoi(s)
		v.SetInt(int64(n))
		return err
	}},
	{reflect.TypeFor[int64](), "int64", func(v reflect.Value, s string) error {
		n, err := strconv.ParseInt(s, 10, 64)
		v.SetInt(n)
		return err
	}},
	{reflect.TypeFor[float64](), "float64", func(v reflect.Value, s string) error {
		f, err := strconv.ParseFloat(s, 64)
		v.SetFloat(f)
		return err
	}},
	{reflect.TypeFor[time.Duration](), "duration", func(v reflect.Value, s string) error {
		d, err := time.ParseDuration(s)
		v.SetInt(int64(d))
		return err
	}},
	{reflect.TypeFor[[]string](), "list", func(v reflect.Value, s string) error {
		v.Set(reflect.ValueOf(SplitList(s)))
		return nil
	}},
}

// namedParsers read the values that have a grammar of their own, named
// by a field's `parse` tag.
var namedParsers = map[string]parser{
	// providers: name=kind[:runtime],… (name=kubernetes:namespace)
	"providers": func(v reflect.Value, s string) error {
		ps, err := ParseProviders(s)
		if err == nil {
			v.Set(reflect.ValueOf(ps))
		}
		return err
	},
	// hosts: name=address[:port],…, a name repeated for more addresses.
	"hosts": func(v reflect.Value, s string) error {
		hosts := map[string][]string{}
		for _, kv := range SplitList(s) {
			name, addr, ok := strings.Cut(kv, "=")
			if !ok || name == "" || addr == "" {
				return fmt.Errorf("%q is not name=address or name=address:port", kv)
			}
			hosts[name] = append(hosts[name], addr)
		}
		v.Set(reflect.ValueOf(hosts))
		return nil
	},
	// ports: port,…
	"ports": func(v reflect.Value, s string) error {
		var ports []int
		for _, p := range SplitList(s) {
			n, err := strconv.Atoi(p)
			if err != nil {
				return fmt.Errorf("%q is not a port", p)
			}
			ports = append(ports, n)
		}
		v.Set(reflect.ValueOf(ports))
		return nil
	},
	// runtimes: a number of runtimes, 0 or more.
	"runtimes": func(v reflect.Value, s string) error {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return fmt.Errorf("want a number of runtimes, not %q", s)
		}
		v.SetInt(int64(n))
		return nil
	},
}

// field is s's field in c.
func (s Setting) field(c *Config) reflect.Value {
	return reflect.ValueOf(c).Elem().FieldByIndex(s.index)
}

// Set reads text into s's field of c as its variable is read; the field
// keeps its value when the text is not one.
func (s Setting) Set(c *Config, text string) error {
	if s.parse == nil {
		return fmt.Errorf("%s is read from the config file only", s.Key)
	}
	v := reflect.New(s.field(c).Type()).Elem()
	if err := s.parse(v, text); err != nil {
		return err
	}
	s.field(c).Set(v)
	return nil
}

// Copy sets s's field of dst to its value in src.
func (s Setting) Copy(dst, src *Config) {
	s.field(dst).Set(s.field(src))
}

// Kind names the setting's kind of value, as --help shows it: string,
// bool, int, int64, float64, duration or list.
func (s Setting) Kind() string { return s.kind }

// Format is s's value in c, written as its variable would be.
func (s Setting) Format(c *Config) string {
	switch v := s.field(c).Interface().(type) {
	case []string:
		return strings.Join(v, ",")
	case time.Duration:
		return v.String()
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case map[string][]string:
		var out []string
		for name, addrs := range v {
			for _, a := range addrs {
				out = append(out, name+"="+a)
			}
		}
		sort.Strings(out)
		return strings.Join(out, ",")
	case []ProviderConfig:
		out := make([]string, len(v))
		for i, p := range v {
			out[i] = p.Name + "=" + p.Kind
			if p.Runtime != "" {
				out[i] += ":" + p.Runtime
			}
			if p.Kubernetes != nil && p.Kubernetes.Namespace != "" {
				out[i] += ":" + p.Kubernetes.Namespace
			}
		}
		return strings.Join(out, ",")
	case []int:
		out := make([]string, len(v))
		for i, n := range v {
			out[i] = strconv.Itoa(n)
		}
		return strings.Join(out, ",")
	default:
		if f := s.field(c); (f.Kind() == reflect.Slice || f.Kind() == reflect.Map) && f.Len() == 0 {
			return ""
		}
		return fmt.Sprint(v)
	}
}
