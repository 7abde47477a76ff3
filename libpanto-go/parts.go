package panto

/*
#include "panto.h"
*/
import "C"

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"unsafe"
)

// PartKind is the kind of a content part: PartText or PartMedia for a Part the program
// gives, PartText, PartImage or PartDocument for a PartInfo the library reports.
type PartKind int32

const (
	PartText     PartKind = C.PANTO_PART_TEXT     // text
	PartMedia    PartKind = C.PANTO_PART_MEDIA    // given: the bytes of an image or a PDF
	PartImage    PartKind = C.PANTO_PART_IMAGE    // reported: an image as sent to the model
	PartDocument PartKind = C.PANTO_PART_DOCUMENT // reported: a PDF as sent to the model
)

// String is the library's stable name: "text", "media", "image", "document"; "unknown" for
// another value.
func (k PartKind) String() string { return C.GoString(C.panto_part_kind_name(C.int(k))) }

// Part is one piece of a user message (Agent.RunParts) or of a tool result (a
// Tool.PartsHandler, Stream.SubmitToolResultParts): text, or media, the raw bytes of an
// image or a PDF. Make one with Text, Media or MediaFile; the zero Part is an empty text.
//
// The library finds the format from the bytes (PNG, JPEG, GIF, WEBP, BMP, PDF; a hint that
// contradicts them loses), fits images to the providers' rules (at most 2000×2000 pixels,
// under 4.5 MB; an image already within them is sent byte for byte) and turns media it
// cannot send (unknown bytes, a corrupt image, an oversized file) into a short text part
// saying what was dropped and why: bad media never fails a call. The EventToolResult of a
// result shows what was sent (Event.Parts).
type Part struct {
	media bool
	text  string // text
	data  []byte // media: the bytes
	hint  string // media: a media type hint, may be empty
	name  string // media: a file name, may be empty
}

// Text is a text part.
func Text(s string) Part { return Part{text: s} }

// Media is a media part: the bytes of an image or a PDF (a file's contents, a screenshot),
// with a media type hint such as "image/png" that may be empty, since the library goes by
// the bytes. Media keeps data, not a copy: the library reads it during the call that takes
// the part (RunParts, the result of a handler, SubmitToolResultParts), so do not change it
// before that call returns. Name the part with WithName.
func Media(data []byte, hint string) Part { return Part{media: true, data: data, hint: hint} }

// MediaFile is a media part holding the contents of the file at path, named after the
// file (its base name): a PDF's name is shown to the model. It fails as os.ReadFile does.
func MediaFile(path string) (Part, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Part{}, err
	}
	return Media(data, "").WithName(filepath.Base(path)), nil
}

// WithName is the part named name, e.g. "report.pdf". A name means something for media
// only: the library shows a document's name to the model and reports it in PartInfo.Name.
func (p Part) WithName(name string) Part {
	p.name = name
	return p
}

// Kind is PartText or PartMedia.
func (p Part) Kind() PartKind {
	if p.media {
		return PartMedia
	}
	return PartText
}

// Text is a text part's text ("" for media).
func (p Part) Text() string { return p.text }

// Data is a media part's bytes (nil for text): the slice given, not a copy.
func (p Part) Data() []byte { return p.data }

// Hint is a media part's media type hint.
func (p Part) Hint() string { return p.hint }

// Name is the part's name (WithName, MediaFile).
func (p Part) Name() string { return p.name }

// String describes the part without its bytes, for logs: `text "Hello"`, `media "a.pdf"
// (1024 bytes, hint "application/pdf")`.
func (p Part) String() string {
	if !p.media {
		return fmt.Sprintf("text %q", p.text)
	}
	return fmt.Sprintf("media %q (%d bytes, hint %q)", p.name, len(p.data), p.hint)
}

// lendParts lends parts to the library for the length of one call, without copying their
// bytes: it returns a Go array of PantoPart that points at the parts' strings and byte
// slices, each pinned with pin so that cgo lets C read the array (Go memory passed to C may
// hold Go pointers only if they are pinned). Unpin pin once the call returned. Nil when
// there are no parts.
func lendParts(parts []Part, pin *runtime.Pinner) []C.PantoPart {
	if len(parts) == 0 {
		return nil
	}
	out := make([]C.PantoPart, len(parts))
	for i, p := range parts {
		c := &out[i]
		if !p.media {
			c.kind = C.PANTO_PART_TEXT
			c.text = pinnedString(p.text, pin)
			continue
		}
		c.kind = C.PANTO_PART_MEDIA
		c.media_type = pinnedString(p.hint, pin)
		c.name = pinnedString(p.name, pin)
		if len(p.data) > 0 {
			c.data = unsafe.Pointer(unsafe.SliceData(p.data))
			c.data_len = C.size_t(len(p.data))
			pin.Pin(c.data)
		}
	}
	return out
}

// pinnedString is pantoString with its bytes pinned. An empty string lends no pointer: its
// data pointer may point just past another object, which must not be pinned.
func pinnedString(s string, pin *runtime.Pinner) C.PantoString {
	if len(s) == 0 {
		return C.PantoString{}
	}
	pin.Pin(unsafe.StringData(s))
	return pantoString(s)
}

// partsPointer is the address of the first element, nil for none.
func partsPointer(parts []C.PantoPart) *C.PantoPart {
	if len(parts) == 0 {
		return nil
	}
	return &parts[0]
}

// PartInfo is one part of a tool result as the library sent it to the model (see
// Event.Parts): text (the notes of dropped media too), an image or a document.
type PartInfo struct {
	Kind      PartKind // PartText, PartImage or PartDocument
	Text      string   // PartText: the text
	MediaType string   // PartImage, PartDocument: "image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf"
	Name      string   // PartImage, PartDocument: the name given, or ""
	ByteSize  int64    // PartImage, PartDocument: the size of the bytes sent (not of their base64)
	Width     int      // PartImage: pixels, after fitting
	Height    int      // PartImage

	data *partData // PartImage, PartDocument: the bytes sent, lent by the library
}

// String describes the part without its data, for logs: `text "Hello"`, `image image/png
// 64x48, 1234 bytes`, `document application/pdf "a.pdf", 5678 bytes`.
func (p PartInfo) String() string {
	switch {
	case p.Kind == PartText:
		return fmt.Sprintf("text %q", p.Text)
	case p.Name != "" && p.Kind == PartImage:
		return fmt.Sprintf("image %s %q %dx%d, %d bytes", p.MediaType, p.Name, p.Width, p.Height, p.ByteSize)
	case p.Kind == PartImage:
		return fmt.Sprintf("image %s %dx%d, %d bytes", p.MediaType, p.Width, p.Height, p.ByteSize)
	case p.Name != "":
		return fmt.Sprintf("%s %s %q, %d bytes", p.Kind, p.MediaType, p.Name, p.ByteSize)
	}
	return fmt.Sprintf("%s %s, %d bytes", p.Kind, p.MediaType, p.ByteSize)
}

// ErrDataReleased is returned by PartInfo.Data and PartInfo.Bytes when the library no
// longer lends the part's bytes: they are read from the stream's memory, valid until its
// next call (Next, SubmitToolResult, Close), unless they were read before it.
var ErrDataReleased = errors.New("panto: the part's data was lent until the stream's next call " +
	"(read it with Data or Bytes before the next Next)")

// Data is the bytes sent, in base64 as the conversation keeps them; "" for a text part. An
// event does not copy them: Data copies them out of the stream's memory the first time it
// is called, which must be before the stream's next call (the next Next, SubmitToolResult,
// Close; with Iter, inside the loop's body), or it returns ErrDataReleased; later calls
// return that copy. (Stream.Events, which reads on while its consumer looks at an event,
// copies the data of each event it delivers.) Use the conversation (Agent.Conversation) to
// get the bytes of an earlier result.
func (p PartInfo) Data() (string, error) {
	if p.data == nil {
		return "", nil
	}
	return p.data.base64()
}

// Bytes is the bytes sent, decoded: a new slice for each call; nil for a text part. It can
// be called when Data can, and decodes straight from the stream's memory when Data was not
// called.
func (p PartInfo) Bytes() ([]byte, error) {
	if p.data == nil {
		return nil, nil
	}
	return p.data.decode()
}

// keepData copies the data of the event's parts out of the library's memory, so that it
// outlives the stream's next call.
func (e Event) keepData() {
	if e.parts == nil {
		return
	}
	for _, p := range *e.parts {
		if p.data != nil {
			_, _ = p.data.base64() // valid: nothing was called since the event was read
		}
	}
}

// partData is the base64 of a part, lent by the library until the stream's next call: it
// is valid while the stream's lent count is still lent. Its fields are guarded by st.mu.
type partData struct {
	st   *streamCore
	lent uint64         // st.lent when the event was read
	ptr  unsafe.Pointer // C memory
	n    int
	kept *string // the copy, once taken
}

// valid says whether the library still lends the data. st.mu must be held.
func (d *partData) valid() bool { return d.st.native != nil && d.st.lent == d.lent }

// base64 is the data, copied out of the library's memory the first time.
func (d *partData) base64() (string, error) {
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	if d.kept == nil {
		if !d.valid() {
			return "", ErrDataReleased
		}
		s := string(unsafe.Slice((*byte)(d.ptr), d.n))
		d.kept = &s
	}
	return *d.kept, nil
}

// decode is the data decoded, from the copy if there is one, else from the library's memory.
func (d *partData) decode() ([]byte, error) {
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	var src []byte
	switch {
	case d.kept != nil:
		src = unsafe.Slice(unsafe.StringData(*d.kept), len(*d.kept))
	case d.valid():
		src = unsafe.Slice((*byte)(d.ptr), d.n)
	default:
		return nil, ErrDataReleased
	}
	out := make([]byte, base64.StdEncoding.DecodedLen(len(src)))
	n, err := base64.StdEncoding.Decode(out, src)
	if err != nil {
		return nil, err
	}
	return out[:n], nil
}
