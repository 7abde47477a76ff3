module panto.dev/bench/go-panto

go 1.24

require panto.dev/panto v0.0.0

replace panto.dev/panto => ../../libpanto-go
