// Package linux_amd64 holds libpanto.a and panto.h for linux/amd64, which `make go-lib`
// (`zig build go-lib`) copies here and the package panto links. The package panto imports
// it so that `go mod vendor` keeps this folder.
package linux_amd64
