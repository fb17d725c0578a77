//===- elf.h - reading ELF files a profile names --------------------------===//
// One way to open an ELF file for reading (libelf, with the invoking user's
// rights, refusing what is no regular file), shared by collect, which reads
// what an exec maps while the run is recorded, and analyze, which reads the
// binaries a profile sampled.
#pragma once
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "common/files.h"
#include "common/result.h"

namespace syspgo {

// Runs read(elf) on the ELF file at `path`, opened and closed here. The
// path is a profile's (a mapping's, an exec's): it may name a FIFO, which
// must not block the open, or anything else that is no regular file.
template <typename T, typename F>
Result<T> WithElf(const std::string& path, F read) {
  static const bool init = elf_version(EV_CURRENT) != EV_NONE;
  if (!init) return MakeError("libelf could not be initialized.");
  auto opened = OpenRegularAsUser(path);
  if (!opened) return opened.error();
  int fd = *opened;
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  if (!elf || elf_kind(elf) != ELF_K_ELF) {
    if (elf) elf_end(elf);
    close(fd);
    return MakeError("'" + path + "' is not an ELF file.");
  }
  T out = read(elf);
  elf_end(elf);
  close(fd);
  return out;
}

// Reads the ELF interpreter an executable names (PT_INTERP, e.g.
// /lib64/ld-linux-x86-64.so.2); "" if it names none.
Result<std::string> ReadElfInterpreter(const std::string& path);

// The names of the sections the program does not run with (no SHF_ALLOC:
// debug info, symbol tables, non-loaded relocations, notes), in file order.
Result<std::vector<std::string>> ReadUnloadedSections(const std::string& path);

}  // namespace syspgo
