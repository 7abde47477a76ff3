// Package linux_arm64 holds libpanto.a and panto.h for linux/arm64, which `make go-lib`
// (`zig build go-lib`) copies here and the package panto links. The package panto imports
// it so that `go mod vendor` keeps this folder.
package linux_arm64
