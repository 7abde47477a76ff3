//go:build !panto_pkgconfig

package panto

// The static library inside the module (lib/linux_arm64/, put there by `make go-lib`): a
// program links panto in and needs no libpanto.so at run time. The panto_pkgconfig build tag
// links the installed library instead (link_pkgconfig.go).

/*
#cgo CFLAGS: -I${SRCDIR}/lib/linux_arm64
#cgo LDFLAGS: ${SRCDIR}/lib/linux_arm64/libpanto.a -lm -lpthread
*/
import "C"

import _ "panto.dev/panto/lib/linux_arm64"
