/* The C declarations the Lua module uses, translated to Zig by build.zig (b.addTranslateC):
 * the Lua 5.4 API and panto's C ABI. The module binds to panto through include/panto.h, the
 * contract, not through the Zig internals of libpanto-c. */
#include <lua.h>
#include <lauxlib.h>
#include "panto.h"
