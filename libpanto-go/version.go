package panto

// Version is the version of this module, the same as the libpanto it is released with
// (scripts/version.py keeps every package's version equal). LibraryVersion says which
// library a program actually linked.
const Version = "0.1.0"
