/* The C declarations the Lua module uses, translated to Zig by build.zig (b.addTranslateC):
 * the Lua 5.4 API, panto's C ABI, and the POSIX threads and clocks of stream:cancel_after.
 * The module binds to panto through include/panto.h, the contract, not through the Zig
 * internals of libpanto-c. */
#include <lua.h>
#include <lauxlib.h>
#include <pthread.h>
#include <time.h>
#include "panto.h"
