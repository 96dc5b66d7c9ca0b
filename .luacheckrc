-- luacheck settings for the repository's Lua: Moonmock scripts see the sandbox's globals.
std = "lua54"
read_globals = { "mock" }
max_line_length = 130
exclude_files = { "types/", ".build/" }
files["**/*_test.lua"] = { read_globals = { "mock", "test", "request", "expect", "state", "advance", "reset" } }
files["examples/bench/nginx/"] = { globals = { "wrk" } }   -- wrk scripts
