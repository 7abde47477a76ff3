//go:build !panto_pkgconfig && !(linux && (amd64 || arm64))

package panto

// The module ships libraries for linux/amd64 and linux/arm64 only: elsewhere, build with
// -tags panto_pkgconfig against an installed libpanto. This undefined name makes the build
// say so.
var _ = panto_ships_libraries_for_linux_amd64_and_arm64_only__build_with_tags_panto_pkgconfig
