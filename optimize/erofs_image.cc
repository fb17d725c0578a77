//===- erofs_image.cc - EROFS images whose data lies in first-touch order ---===//
#include "optimize/erofs_image.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <unordered_map>

#include "common/files.h"
#include "common/process.h"
#include "optimize/deploy_lists.h"

namespace syspgo {
namespace {

constexpr uint64_t kBlock = 4096;
constexpr uint64_t kSuperOffset = 1024;
constexpr uint32_t kMagic = 0xE0F5E1E2;
constexpr uint32_t kCompatSbChecksum = 0x1;
// Incompatible features this layout understands: chunk-based files. Any
// other (compression, a device table) changes what block addresses mean.
constexpr uint32_t kIncompatChunkedFile = 0x4;
constexpr uint32_t kNullBlock = 0xFFFFFFFF;
constexpr uint16_t kChunkIndexes = 0x20;  // 8-byte chunk indexes in place of 4-byte block addresses
constexpr uint16_t kChunkBitsMask = 0x1F;

enum DataLayout : unsigned { kFlatPlain = 0, kFlatInline = 2, kChunkBased = 4 };

// Offsets in the superblock (from byte 1024) and in an inode.
constexpr uint64_t kSbChecksum = 4, kSbCompat = 8, kSbBlkszBits = 12, kSbRootNid = 14, kSbMetaBlkaddr = 40,
                   kSbIncompat = 80, kSbExtraDevices = 86;
constexpr uint64_t kIFormat = 0, kIXattrCount = 2, kIMode = 4, kISize = 8, kIU = 16;

uint32_t Crc32c(uint32_t crc, const unsigned char* p, size_t n) {
  while (n--) {
    crc ^= *p++;
    for (int i = 0; i < 8; i++) crc = (crc >> 1) ^ ((crc & 1) ? 0x82F63B78u : 0);
  }
  return crc;
}

uint64_t Le(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

// The image, read through one descriptor; every read is checked against
// its size, so a damaged image is an error naming it, never a wild read.
class ImageFile {
 public:
  static Result<ImageFile> Open(const std::string& path) {
    auto fd = OpenRegularAsUser(path, "EROFS image");
    if (!fd) return fd.error();
    struct stat st{};
    if (fstat(*fd, &st) != 0) {
      int e = errno;
      close(*fd);
      return MakeError("cannot stat the EROFS image '" + path + "': " + strerror(e));
    }
    return ImageFile(path, *fd, static_cast<uint64_t>(st.st_size));
  }
  ImageFile(ImageFile&& o) noexcept : path_(std::move(o.path_)), fd_(o.fd_), size_(o.size_) { o.fd_ = -1; }
  ImageFile(const ImageFile&) = delete;
  ~ImageFile() {
    if (fd_ >= 0) close(fd_);
  }
  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }

  Status Read(uint64_t off, void* out, uint64_t len) const {
    if (off > size_ || len > size_ - off) return Damaged("reaches past its end (byte " + std::to_string(off) + ")");
    uint64_t done = 0;
    while (done < len) {
      ssize_t n = pread(fd_, static_cast<char*>(out) + done, len - done, static_cast<off_t>(off + done));
      if (n <= 0) return MakeError("cannot read the EROFS image '" + path_ + "': " + (n < 0 ? strerror(errno) : "short read"));
      done += static_cast<uint64_t>(n);
    }
    return {};
  }
  Result<uint64_t> Uint(uint64_t off, int bytes) const {
    unsigned char b[8];
    SYSPGO_TRY(Read(off, b, static_cast<uint64_t>(bytes)));
    return Le(b, bytes);
  }
  Error Damaged(const std::string& what) const {
    return MakeError("the EROFS image '" + path_ + "' is damaged or not one mkfs.erofs made: " + what);
  }

 private:
  ImageFile(std::string path, int fd, uint64_t size) : path_(std::move(path)), fd_(fd), size_(size) {}
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

struct Inode {
  uint64_t pos = 0;          // byte offset of the inode
  uint64_t body = 0;         // bytes of the inode and its inline xattrs
  unsigned layout = 0;
  uint16_t mode = 0;
  uint64_t size = 0;
  uint32_t u = 0;            // raw_blkaddr, or the chunk format in its low 16 bits
};

struct Super {
  uint64_t meta = 0;  // byte offset of nid 0
  uint64_t root_nid = 0;
  bool checksum = false;
};

Result<Super> ReadSuper(const ImageFile& img) {
  unsigned char sb[128];
  SYSPGO_TRY(img.Read(kSuperOffset, sb, sizeof(sb)));
  if (Le(sb, 4) != kMagic) return MakeError("'" + img.path() + "' is not an EROFS image (no EROFS magic at byte 1024)");
  if (sb[kSbBlkszBits] != 12) return img.Damaged("its block size is not 4096 bytes");
  uint32_t incompat = static_cast<uint32_t>(Le(sb + kSbIncompat, 4));
  if ((incompat & ~kIncompatChunkedFile) || Le(sb + kSbExtraDevices, 2))
    return MakeError("the EROFS image '" + img.path() + "' uses features this layout does not move blocks under "
                     "(compression or extra devices); make it with 'mkfs.erofs --chunksize=4096' and no -z");
  Super s;
  s.meta = Le(sb + kSbMetaBlkaddr, 4) * kBlock;
  s.root_nid = Le(sb + kSbRootNid, 2);
  s.checksum = Le(sb + kSbCompat, 4) & kCompatSbChecksum;
  return s;
}

Result<Inode> ReadInode(const ImageFile& img, const Super& sb, uint64_t nid) {
  Inode in;
  in.pos = sb.meta + nid * 32;
  unsigned char b[64];
  SYSPGO_TRY(img.Read(in.pos, b, 32));
  uint16_t format = static_cast<uint16_t>(Le(b + kIFormat, 2));
  bool extended = format & 1;
  if (extended) SYSPGO_TRY(img.Read(in.pos, b, 64));
  in.layout = (format >> 1) & 7;
  uint64_t xattr_count = Le(b + kIXattrCount, 2);
  in.body = (extended ? 64 : 32) + (xattr_count ? 12 + 4 * (xattr_count - 1) : 0);
  in.mode = static_cast<uint16_t>(Le(b + kIMode, 2));
  in.size = Le(b + kISize, extended ? 8 : 4);
  in.u = static_cast<uint32_t>(Le(b + kIU, 4));
  return in;
}

// The byte offset of each chunk-map entry of a chunk-based file, and its size.
struct ChunkMap {
  uint64_t first = 0;
  unsigned unit = 4;
  uint64_t count = 0;
};

Result<ChunkMap> ChunkMapOf(const ImageFile& img, const Inode& in) {
  uint16_t format = static_cast<uint16_t>(in.u);
  if (format & kChunkBitsMask)
    return MakeError("the EROFS image '" + img.path() + "' has chunks larger than 4 KiB; make it with "
                     "'mkfs.erofs --chunksize=4096'");
  ChunkMap m;
  m.unit = (format & kChunkIndexes) ? 8 : 4;
  m.first = (in.pos + in.body + m.unit - 1) / m.unit * m.unit;
  m.count = (in.size + kBlock - 1) / kBlock;
  if (m.count > img.size() / m.unit) return img.Damaged("a file claims more chunks than the image holds");
  return m;
}

// The block address in chunk-map entry i (device_id must be the image itself).
Result<uint32_t> ChunkBlock(const ImageFile& img, const ChunkMap& m, uint64_t i) {
  uint64_t at = m.first + i * m.unit;
  if (m.unit == 8) {
    auto dev = img.Uint(at + 2, 2);
    if (!dev) return dev.error();
    if (*dev) return img.Damaged("a chunk lies on another device");
    at += 4;
  }
  auto blk = img.Uint(at, 4);
  if (!blk) return blk.error();
  return static_cast<uint32_t>(*blk);
}

// The bytes of a directory (flat, with or without an inline tail).
Result<std::string> DirectoryBytes(const ImageFile& img, const Inode& in) {
  if (in.layout != kFlatPlain && in.layout != kFlatInline) return img.Damaged("a directory of an unknown layout");
  if (in.size > img.size()) return img.Damaged("a directory larger than the image");
  std::string data(in.size, '\0');
  uint64_t full = in.layout == kFlatInline ? in.size / kBlock * kBlock : in.size;
  // An inline directory smaller than a block has no block address at all.
  if (full) SYSPGO_TRY(img.Read(uint64_t{in.u} * kBlock, data.data(), full));
  if (full < in.size) SYSPGO_TRY(img.Read(in.pos + in.body, data.data() + full, in.size - full));
  return data;
}

// path below the root -> nid, of every regular file; depth-first. A
// directory is walked once: an image that names one twice (a loop, or two
// parents) is refused, where walking it again could go on for ever.
Status WalkFiles(const ImageFile& img, const Super& sb, uint64_t nid, const std::string& prefix, int depth,
                 std::set<uint64_t>& dirs, std::unordered_map<std::string, uint64_t>& files) {
  if (depth > 256) return img.Damaged("directories nest deeper than 256");
  if (!dirs.insert(nid).second) return img.Damaged("a directory is reached twice");
  auto dir = ReadInode(img, sb, nid);
  if (!dir) return dir.error();
  auto data = DirectoryBytes(img, *dir);
  if (!data) return data.error();
  for (uint64_t block = 0; block < data->size(); block += kBlock) {
    std::string_view b = std::string_view(*data).substr(block, kBlock);
    if (b.size() < 12) return img.Damaged("a directory block too short for an entry");
    uint64_t entries = Le(reinterpret_cast<const unsigned char*>(b.data()) + 8, 2) / 12;
    if (entries == 0 || entries * 12 > b.size()) return img.Damaged("a directory block with a bad first entry");
    for (uint64_t e = 0; e < entries; ++e) {
      const auto* d = reinterpret_cast<const unsigned char*>(b.data()) + e * 12;
      uint64_t child = Le(d, 8), name_at = Le(d + 8, 2);
      uint64_t name_end = e + 1 < entries ? Le(d + 12 + 8, 2) : b.size();
      if (name_at > name_end || name_end > b.size()) return img.Damaged("a directory entry's name out of its block");
      std::string_view name = b.substr(name_at, name_end - name_at);
      name = name.substr(0, name.find('\0'));
      if (name == "." || name == "..") continue;
      std::string path = prefix + std::string(name);
      unsigned type = d[10];
      if (type == 2) {  // EROFS_FT_DIR
        SYSPGO_TRY(WalkFiles(img, sb, child, path + "/", depth + 1, dirs, files));
      } else if (type == 1) {  // EROFS_FT_REG_FILE
        files.emplace(path, child);
      }
    }
  }
  return {};
}

// Every chunk-map entry of the image's chunk-based files, by file.
struct ImageMaps {
  Super sb;
  std::unordered_map<std::string, uint64_t> files;  // path -> nid
  std::map<uint64_t, ChunkMap> maps;                // nid -> its chunk map
};

Result<ImageMaps> ReadMaps(const ImageFile& img) {
  ImageMaps m;
  auto sb = ReadSuper(img);
  if (!sb) return sb.error();
  m.sb = *sb;
  std::set<uint64_t> dirs;
  SYSPGO_TRY(WalkFiles(img, m.sb, m.sb.root_nid, "", 0, dirs, m.files));
  for (const auto& [path, nid] : m.files) {
    if (m.maps.count(nid)) continue;  // a hard link
    auto in = ReadInode(img, m.sb, nid);
    if (!in) return in.error();
    if (in->layout != kChunkBased) continue;  // empty files, or data mkfs.erofs kept inline
    auto map = ChunkMapOf(img, *in);
    if (!map) return map.error();
    m.maps.emplace(nid, *map);
  }
  return m;
}

}  // namespace

Result<std::vector<uint32_t>> ErofsFileBlocks(const std::string& image, const std::string& path) {
  auto img = ImageFile::Open(image);
  if (!img) return img.error();
  auto m = ReadMaps(*img);
  if (!m) return m.error();
  auto f = m->files.find(path);
  if (f == m->files.end()) return MakeError("no regular file '" + path + "' in the EROFS image '" + image + "'");
  std::vector<uint32_t> out;
  auto map = m->maps.find(f->second);
  if (map == m->maps.end()) return out;
  for (uint64_t i = 0; i < map->second.count; ++i) {
    auto b = ChunkBlock(*img, map->second, i);
    if (!b) return b.error();
    out.push_back(*b);
  }
  return out;
}

Result<ErofsLayout> LayOutErofsImage(const std::string& image, const std::string& output, const Plan& plan,
                                     const std::string& source_dir) {
  auto img = ImageFile::Open(image);
  if (!img) return img.error();
  auto m = ReadMaps(*img);
  if (!m) return m.error();
  const uint64_t blocks = img->size() / kBlock;

  // Where every chunk-map entry is, and what it points at.
  std::vector<std::pair<uint64_t, uint32_t>> entries;  // (byte offset of the address, block)
  std::vector<uint32_t> slots;                          // the data blocks, ascending: where data may go
  std::map<uint64_t, std::vector<uint32_t>> file_blocks;  // nid -> block of each page
  for (const auto& [nid, map] : m->maps) {
    auto& fb = file_blocks[nid];
    for (uint64_t i = 0; i < map.count; ++i) {
      auto b = ChunkBlock(*img, map, i);
      if (!b) return b.error();
      fb.push_back(*b);
      if (*b == kNullBlock) continue;
      if (*b >= blocks) return img->Damaged("a chunk points past the end of the image");
      entries.emplace_back(map.first + i * map.unit + (map.unit == 8 ? 4 : 0), *b);
      slots.push_back(*b);
    }
  }
  std::sort(slots.begin(), slots.end());
  slots.erase(std::unique(slots.begin(), slots.end()), slots.end());

  // The order: the plan's pages as a replay reads them, then every other
  // data block where mkfs.erofs put it.
  ErofsLayout out;
  out.data_blocks = slots.size();
  std::vector<uint32_t> order;
  order.reserve(slots.size());
  std::vector<bool> placed(blocks);
  std::vector<const std::vector<uint32_t>*> plan_blocks(plan.files.size(), nullptr);
  for (size_t i = 0; i < plan.files.size(); ++i) {
    const std::string& path = plan.files[i].path;
    std::string rel = PathInside(source_dir, path);
    auto f = rel.empty() ? m->files.end() : m->files.find(rel);
    if (rel.empty()) out.left_out.push_back(path + ": not under " + source_dir);
    else if (f == m->files.end()) out.left_out.push_back(path + ": not a regular file in the image");
    else if (!file_blocks.count(f->second)) out.left_out.push_back(path + ": its data is not in chunks (empty?)");
    else {
      plan_blocks[i] = &file_blocks[f->second];
      ++out.files_placed;
    }
  }
  for (const PlanStep& s : ReplayOrder(plan)) {
    const auto* fb = plan_blocks[s.file];
    if (!fb) continue;
    const PlanExtent& e = plan.files[s.file].extents[s.extent];
    uint64_t end = std::min<uint64_t>(fb->size(), (e.offset + e.length) / kBlock);
    for (uint64_t page = e.offset / kBlock; page < end; ++page) {
      uint32_t b = (*fb)[page];
      if (b == kNullBlock || placed[b]) continue;
      placed[b] = true;
      order.push_back(b);
    }
  }
  out.blocks_placed = order.size();
  for (uint32_t b : slots)
    if (!placed[b]) order.push_back(b);

  // Slot j (the j-th data block of the image) gets the bytes of order[j].
  std::vector<uint32_t> source(blocks), moved(blocks);  // new -> old, old -> new
  for (uint64_t b = 0; b < blocks; ++b) source[b] = moved[b] = static_cast<uint32_t>(b);
  for (size_t j = 0; j < slots.size(); ++j) {
    moved[order[j]] = slots[j];
    source[slots[j]] = order[j];
  }
  std::map<uint64_t, uint32_t> patches;  // byte offset of a chunk-map address -> its new block
  for (const auto& [at, b] : entries) patches[at] = moved[b];

  Status st = WriteFileAtomically(output, [&](FILE* f) -> Status {
    std::vector<unsigned char> buf(kBlock);
    auto patch = patches.begin();
    for (uint64_t b = 0; b < blocks; ++b) {
      SYSPGO_TRY(img->Read(uint64_t{source[b]} * kBlock, buf.data(), kBlock));
      for (; patch != patches.end() && patch->first < (b + 1) * kBlock; ++patch) {
        // Entries are 4-byte aligned (ChunkMapOf), so none straddles two blocks.
        if (patch->first + 4 > (b + 1) * kBlock) return img->Damaged("a chunk-map entry straddles two blocks");
        for (int i = 0; i < 4; ++i) buf[patch->first - b * kBlock + i] = static_cast<unsigned char>(patch->second >> (8 * i));
      }
      if (b == 0 && m->sb.checksum) {  // chunk maps may share the superblock's block
        memset(&buf[kSuperOffset + kSbChecksum], 0, 4);
        uint32_t crc = Crc32c(~0u, &buf[kSuperOffset], kBlock - kSuperOffset);
        for (int i = 0; i < 4; ++i) buf[kSuperOffset + kSbChecksum + i] = static_cast<unsigned char>(crc >> (8 * i));
      }
      if (fwrite(buf.data(), 1, kBlock, f) != kBlock) return MakeError(std::string("write failed: ") + strerror(errno));
    }
    // A tail shorter than a block (mkfs.erofs writes whole blocks; kept as it is).
    uint64_t tail = img->size() - blocks * kBlock;
    if (tail) {
      SYSPGO_TRY(img->Read(blocks * kBlock, buf.data(), tail));
      if (fwrite(buf.data(), 1, tail, f) != tail) return MakeError(std::string("write failed: ") + strerror(errno));
    }
    return {};
  });
  if (!st.ok()) return st.error();
  return out;
}

Result<ErofsLayout> BuildErofsImage(const std::string& source_dir, const std::string& output, const Plan& plan) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(source_dir, ec))
    return MakeError("--source-dir '" + source_dir + "' is not a directory: give the directory the image is made of");
  // mkfs.erofs writes its image beside the output (the same file system:
  // no copy of hundreds of MiB through /tmp), in a directory of our own.
  std::string dir_of = fs::path(output).parent_path().string();
  std::string work = (dir_of.empty() ? "." : dir_of) + "/.syspgo-erofs-XXXXXX";
  if (!mkdtemp(work.data()))
    return MakeError("cannot make a work directory beside '" + output + "': " + strerror(errno));
  std::string raw = work + "/unordered.erofs";
  auto laid = [&]() -> Result<ErofsLayout> {
    ProcessSpec spec;
    spec.argv = {"mkfs.erofs", "--quiet", "--chunksize=4096", raw, source_dir};
    spec.err_to_out = true;
    auto r = RunProcess(spec);
    if (!r) return MakeError(r.error().message + " (mkfs.erofs is in Debian's erofs-utils)");
    if (r->status != 0)
      return MakeError("mkfs.erofs failed on '" + source_dir + "' (status " + std::to_string(r->status) + "): " + r->out);
    return LayOutErofsImage(raw, output, plan, source_dir);
  }();
  fs::remove_all(work, ec);
  return laid;
}

}  // namespace syspgo
