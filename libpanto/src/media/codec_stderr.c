/* Debian's static codec archives are PIE code: they reach glibc's `stderr` pointer with a
 * PC-relative load, which works in an executable (the linker copies the variable in) but
 * cannot be linked into a shared library (libpanto.so). This hidden `stderr` takes its place
 * inside libpanto: it points at the same FILE as glibc's. The codecs' default message paths
 * that would use it are never taken (the shims install their own handlers); it only has to
 * link, and to be right if one were. Weak: a program linked with -static against libpanto.a
 * gets libc.a's own `stderr`, which would otherwise be defined twice. */
extern char _IO_2_1_stderr_[]; /* glibc: the FILE that stderr points at */
__attribute__((weak, visibility("hidden"))) void *stderr = _IO_2_1_stderr_;
