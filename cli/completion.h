//===- completion.h - shell completion written from the option tables ----===//
// `syspgo --completion bash` prints a bash completion script for syspgo and
// syspgo-prefetch, read from every command's CLI11 declaration (options.h):
// its option names, which take a value, and the values of those that take
// one of a list. The build writes it and `cmake --install` installs it, so
// it cannot drift from the options.
#pragma once
#include <cstdio>
#include <string>

namespace syspgo::cli {

// Writes the completion script for `shell` ("bash") to `out`; returns the
// exit status (2, with a message, for a shell it has no script for).
int PrintCompletion(const std::string& shell, FILE* out);

}  // namespace syspgo::cli
