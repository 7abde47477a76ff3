package panto

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// SchemaProvider is implemented by a type that describes its own JSON form, for the types
// the reflection of JSONSchema cannot (one with a custom UnmarshalJSON, say). JSONSchema
// returns a JSON Schema.
type SchemaProvider interface {
	JSONSchema() json.RawMessage
}

// JSONSchema is the JSON Schema of the JSON form of T, as encoding/json reads it, for the
// input of a tool (see NewTool). T must be a struct, a map or a pointer to one.
//
// Each exported field is a property named as encoding/json names it (the `json` tag, else
// the field name; `json:"-"` leaves it out; the fields of embedded structs are promoted).
// A property is required unless its tag says omitempty or omitzero, or it is a pointer.
// Tags:
//
//	description:"The city"   "description"
//	enum:"c,f"               "enum": the values, of the field's type (a slice's items')
//	default:"c"              "default", of the field's type
//
// Types: string → string; integers → integer (unsigned ones with "minimum": 0); floats →
// number; bool → boolean; slices and arrays → array with items ([]byte: a base64 string);
// maps → object with additionalProperties; structs → object with properties and required
// (recursively); time.Time → string "date-time"; encoding.TextUnmarshaler → string;
// interfaces and json.RawMessage → {} (any value); a SchemaProvider → its own schema.
// Recursive types, channels, functions and complex numbers are refused with an error.
func JSONSchema[T any]() (json.RawMessage, error) {
	return schemaOfType(reflect.TypeFor[T]())
}

func schemaOfType(t reflect.Type) (json.RawMessage, error) {
	s, err := rootSchema(t, "the input of a tool")
	if err != nil {
		return nil, err
	}
	return marshalSchema(t, s)
}

// rootSchema describes t, which must have a JSON object form: what is `what` says whose
// (for the error).
func rootSchema(t reflect.Type, what string) (object, error) {
	root := t
	for root.Kind() == reflect.Pointer {
		root = root.Elem()
	}
	if !implements(root, schemaProviderType) && root.Kind() != reflect.Struct && root.Kind() != reflect.Map {
		return nil, fmt.Errorf("panto: %s is a JSON object: %s is not a struct or a map", what, t)
	}
	g := schemaGen{visiting: map[reflect.Type]bool{}}
	return g.schema(t, "")
}

// marshalSchema writes the schema s of t.
func marshalSchema(t reflect.Type, s object) (json.RawMessage, error) {
	out, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("panto: the schema of %s: %w", t, err)
	}
	if !bytes.HasPrefix(out, []byte("{")) {
		return nil, fmt.Errorf("panto: the schema of %s is not a JSON object: %s", t, out)
	}
	return out, nil
}

// object is a JSON object that keeps its keys in insertion order, so that a schema lists
// the properties in the order of the struct's fields.
type object []member

type member struct {
	key   string
	value any
}

func (o *object) set(key string, value any) {
	for i := range *o {
		if (*o)[i].key == key {
			(*o)[i].value = value
			return
		}
	}
	*o = append(*o, member{key, value})
}

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(m.key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(m.value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

var (
	schemaProviderType  = reflect.TypeFor[SchemaProvider]()
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
	timeType            = reflect.TypeFor[time.Time]()
)

// implements tells whether t or *t implements iface (methods on a pointer receiver count:
// encoding/json decodes into addressable values).
func implements(t, iface reflect.Type) bool {
	return t.Implements(iface) || (t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(iface))
}

type schemaGen struct {
	visiting map[reflect.Type]bool // the struct types being described: a cycle is refused
}

// schema describes t; where names the place for error messages ("" at the root).
func (g *schemaGen) schema(t reflect.Type, where string) (object, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.Interface:
		return object{}, nil // any JSON value
	case implements(t, schemaProviderType):
		var p SchemaProvider
		if t.Implements(schemaProviderType) {
			p = reflect.Zero(t).Interface().(SchemaProvider)
		} else {
			p = reflect.New(t).Interface().(SchemaProvider)
		}
		raw := p.JSONSchema()
		var o object
		if err := decodeObject(raw, &o); err != nil {
			return nil, fmt.Errorf("panto: %s: the JSONSchema of %s is not a JSON object: %v", whereText(where), t, err)
		}
		return o, nil
	case t == timeType:
		return object{{"type", "string"}, {"format", "date-time"}}, nil
	case t == rawMessageType:
		return object{}, nil
	case implements(t, jsonUnmarshalerType):
		return object{}, nil // its own JSON form, which reflection cannot see
	case implements(t, textUnmarshalerType):
		return object{{"type", "string"}}, nil
	}
	switch t.Kind() {
	case reflect.Bool:
		return object{{"type", "boolean"}}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return object{{"type", "integer"}}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return object{{"type", "integer"}, {"minimum", 0}}, nil
	case reflect.Float32, reflect.Float64:
		return object{{"type", "number"}}, nil
	case reflect.String:
		return object{{"type", "string"}}, nil
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 &&
			!implements(t.Elem(), jsonUnmarshalerType) && !implements(t.Elem(), textUnmarshalerType) {
			return object{{"type", "string"}, {"contentEncoding", "base64"}}, nil
		}
		items, err := g.schema(t.Elem(), where+"[]")
		if err != nil {
			return nil, err
		}
		s := object{{"type", "array"}, {"items", items}}
		if t.Kind() == reflect.Array {
			s = append(s, member{"minItems", t.Len()}, member{"maxItems", t.Len()})
		}
		return s, nil
	case reflect.Map:
		switch k := t.Key(); {
		case k.Kind() == reflect.String, implements(k, textUnmarshalerType),
			k.Kind() >= reflect.Int && k.Kind() <= reflect.Uintptr:
		default:
			return nil, fmt.Errorf("panto: %s: a map key of type %s has no JSON form", whereText(where), k)
		}
		values, err := g.schema(t.Elem(), where+"{}")
		if err != nil {
			return nil, err
		}
		return object{{"type", "object"}, {"additionalProperties", values}}, nil
	case reflect.Struct:
		return g.structSchema(t, where)
	default:
		return nil, fmt.Errorf("panto: %s: a value of type %s has no JSON form", whereText(where), t)
	}
}

func whereText(where string) string {
	if where == "" {
		return "the input"
	}
	return "field " + strings.TrimPrefix(where, ".")
}

// field is one property of a struct, as encoding/json sees it.
type field struct {
	name     string
	index    []int // the path of field indexes, through embedded structs
	tagged   bool  // named by its json tag
	optional bool
	sf       reflect.StructField
}

func (g *schemaGen) structSchema(t reflect.Type, where string) (object, error) {
	if g.visiting[t] {
		return nil, fmt.Errorf("panto: %s: the recursive type %s is not supported", whereText(where), t)
	}
	g.visiting[t] = true
	defer delete(g.visiting, t)

	properties := object{}
	var required []string
	for _, f := range jsonFields(t) {
		fwhere := where + "." + f.name
		s, err := g.schema(f.sf.Type, fwhere)
		if err != nil {
			return nil, err
		}
		if err := applyTags(&s, f, fwhere); err != nil {
			return nil, err
		}
		properties = append(properties, member{f.name, s})
		if !f.optional {
			required = append(required, f.name)
		}
	}
	s := object{{"type", "object"}, {"properties", properties}}
	if len(required) > 0 {
		s = append(s, member{"required", required})
	}
	return s, nil
}

// jsonFields lists the fields encoding/json encodes for the struct type t, in its order,
// with the same rules: exported fields, `json:"-"` skipped, embedded structs promoted, and
// of several fields with one name the shallowest wins (of several at that depth, the one
// tagged; otherwise none).
func jsonFields(t reflect.Type) []field {
	var all []field
	var walk func(t reflect.Type, index []int, seen map[reflect.Type]bool)
	walk = func(t reflect.Type, index []int, seen map[reflect.Type]bool) {
		if seen[t] {
			return
		}
		seen[t] = true
		defer delete(seen, t)
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			ft := sf.Type
			if sf.Anonymous {
				et := ft
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if !sf.IsExported() && et.Kind() != reflect.Struct {
					continue
				}
				if name == "" && et.Kind() == reflect.Struct {
					walk(et, append(slices.Clone(index), i), seen)
					continue
				}
			} else if !sf.IsExported() {
				continue
			}
			f := field{name: name, tagged: name != "", index: append(slices.Clone(index), i), sf: sf}
			if f.name == "" {
				f.name = sf.Name
			}
			for o := range strings.SplitSeq(opts, ",") {
				if o == "omitempty" || o == "omitzero" {
					f.optional = true
				}
			}
			if ft.Kind() == reflect.Pointer {
				f.optional = true
			}
			all = append(all, f)
		}
	}
	walk(t, nil, map[reflect.Type]bool{})

	byName := map[string][]field{}
	for _, f := range all {
		byName[f.name] = append(byName[f.name], f)
	}
	var out []field
	for _, f := range all {
		if sameField(dominant(byName[f.name]), f) {
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(a, b field) int { return slices.Compare(a.index, b.index) })
	return out
}

// dominant is the field encoding/json keeps among fields of one name, or nil.
func dominant(fs []field) *field {
	depth := len(fs[0].index)
	for _, f := range fs {
		depth = min(depth, len(f.index))
	}
	var shallow []field
	for _, f := range fs {
		if len(f.index) == depth {
			shallow = append(shallow, f)
		}
	}
	if len(shallow) == 1 {
		return &shallow[0]
	}
	var tagged []field
	for _, f := range shallow {
		if f.tagged {
			tagged = append(tagged, f)
		}
	}
	if len(tagged) == 1 {
		return &tagged[0]
	}
	return nil
}

func sameField(d *field, f field) bool { return d != nil && slices.Equal(d.index, f.index) }

// applyTags adds the description, enum and default tags of f to its schema s.
func applyTags(s *object, f field, where string) error {
	// ",string": encoding/json reads a number or a boolean from a JSON string.
	_, opts, _ := strings.Cut(f.sf.Tag.Get("json"), ",")
	if slices.Contains(strings.Split(opts, ","), "string") {
		switch base(f.sf.Type).Kind() {
		case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
			reflect.Float32, reflect.Float64, reflect.String:
			*s = object{{"type", "string"}}
		}
	}
	if d, ok := f.sf.Tag.Lookup("description"); ok {
		s.set("description", d)
	}
	if e, ok := f.sf.Tag.Lookup("enum"); ok {
		target, vt := s, base(f.sf.Type)
		if k := vt.Kind(); (k == reflect.Slice || k == reflect.Array) && !isBase64(vt) {
			// A slice's enum constrains its items.
			items := lookup(*s, "items").(object)
			target, vt = &items, base(vt.Elem())
			defer func() { s.set("items", items) }()
		}
		var values []any
		for _, text := range strings.Split(e, ",") {
			v, err := parseTagValue(strings.TrimSpace(text), vt, lookup(*target, "type"))
			if err != nil {
				return fmt.Errorf("panto: %s: enum value %q: %v", whereText(where), text, err)
			}
			values = append(values, v)
		}
		target.set("enum", values)
	}
	if d, ok := f.sf.Tag.Lookup("default"); ok {
		v, err := parseTagValue(d, base(f.sf.Type), lookup(*s, "type"))
		if err != nil {
			return fmt.Errorf("panto: %s: default %q: %v", whereText(where), d, err)
		}
		s.set("default", v)
	}
	return nil
}

func base(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

func isBase64(t reflect.Type) bool {
	return t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8
}

func lookup(o object, key string) any {
	for _, m := range o {
		if m.key == key {
			return m.value
		}
	}
	return nil
}

// parseTagValue reads a value of a tag as the JSON type of the schema (schemaType), or for
// a schema without a type, as JSON when it parses and as a string otherwise.
func parseTagValue(text string, t reflect.Type, schemaType any) (any, error) {
	switch schemaType {
	case "string":
		return text, nil
	case "integer":
		if t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uintptr {
			return strconv.ParseUint(text, 10, 64)
		}
		return strconv.ParseInt(text, 10, 64)
	case "number":
		return strconv.ParseFloat(text, 64)
	case "boolean":
		return strconv.ParseBool(text)
	case "array", "object":
		var v any
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			return nil, err
		}
		return v, nil
	}
	var v any
	if json.Unmarshal([]byte(text), &v) == nil {
		return v, nil
	}
	return text, nil
}

// decodeObject reads a JSON object into o, keeping its key order.
func decodeObject(raw []byte, o *object) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	v, err := decodeOrdered(d)
	if err != nil {
		return err
	}
	obj, ok := v.(object)
	if !ok {
		return fmt.Errorf("got %s", bytes.TrimSpace(raw))
	}
	if d.More() {
		return fmt.Errorf("trailing data after the object")
	}
	*o = obj
	return nil
}

func decodeOrdered(d *json.Decoder) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := object{}
		for d.More() {
			k, err := d.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeOrdered(d)
			if err != nil {
				return nil, err
			}
			o = append(o, member{k.(string), v})
		}
		_, err := d.Token()
		return o, err
	case json.Delim('['):
		a := []any{}
		for d.More() {
			v, err := decodeOrdered(d)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := d.Token()
		return a, err
	}
	return tok, nil
}
