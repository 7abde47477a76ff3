//go:build !panto_pkgconfig && !(linux && (amd64 || arm64))

package panto

// The module ships libraries for linux/amd64 and linux/arm64 only: elsewhere, the panto.h
// found is one whose #error says to build with -tags panto_pkgconfig against an installed
// libpanto.

/*
#cgo CFLAGS: -I${SRCDIR}/lib/unsupported
*/
import "C"
