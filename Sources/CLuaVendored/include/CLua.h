#ifndef MOONMOCK_CLUA_VENDORED_H
#define MOONMOCK_CLUA_VENDORED_H

// Lua 5.4.8 built from its own sources (third-party/lua-5.4.8, unmodified), then the same shim
// the system library's module uses: shim.h includes <lua.h> only when no Lua header came first.
#include "../third-party/lua-5.4.8/lua.h"
#include "../third-party/lua-5.4.8/lauxlib.h"
#include "../third-party/lua-5.4.8/lualib.h"
#include "../../CLua/shim.h"

#endif
