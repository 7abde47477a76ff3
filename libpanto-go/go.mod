module panto.dev/panto

go 1.24
