/* What cgo finds as panto.h on a platform the module ships no library for (link_other.go). */
#error "panto: the module ships libpanto for linux/amd64 and linux/arm64 only; elsewhere build with -tags panto_pkgconfig against an installed libpanto (docs/go.md)"
