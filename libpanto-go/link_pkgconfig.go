//go:build panto_pkgconfig

package panto

// With the build tag panto_pkgconfig, the installed library (`zig build install --prefix P`)
// found by pkg-config: `PKG_CONFIG_PATH=P/lib/pkgconfig go build -tags panto_pkgconfig`.

/*
#cgo pkg-config: panto
*/
import "C"
