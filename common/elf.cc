//===- elf.cc - reading ELF files a profile names -------------------------===//
#include "common/elf.h"

#include <cstring>

namespace syspgo {

Result<std::string> ReadElfInterpreter(const std::string& path) {
  return WithElf<std::string>(path, [](Elf* elf) {
    size_t n = 0;
    if (elf_getphdrnum(elf, &n) != 0) return std::string();
    for (size_t i = 0; i < n; ++i) {
      GElf_Phdr ph;
      if (!gelf_getphdr(elf, static_cast<int>(i), &ph) || ph.p_type != PT_INTERP) continue;
      size_t size = 0;
      const char* raw = elf_rawfile(elf, &size);
      if (!raw || ph.p_offset >= size || ph.p_filesz > size - ph.p_offset) return std::string();
      return std::string(raw + ph.p_offset, strnlen(raw + ph.p_offset, ph.p_filesz));
    }
    return std::string();
  });
}

Result<std::vector<std::string>> ReadUnloadedSections(const std::string& path) {
  auto names = WithElf<std::vector<std::string>>(path, [](Elf* elf) {
    std::vector<std::string> out;
    size_t strndx = 0;
    if (elf_getshdrstrndx(elf, &strndx) != 0) return out;
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
      GElf_Shdr sh;
      if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NULL || (sh.sh_flags & SHF_ALLOC)) continue;
      if (const char* name = elf_strptr(elf, strndx, sh.sh_name)) out.emplace_back(name);
    }
    return out;
  });
  return names;
}

}  // namespace syspgo
