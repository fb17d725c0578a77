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
#include <optional>
#include <set>
#include <unordered_map>

#include "common/files.h"
#include "common/process.h"
#include "optimize/deploy_lists.h"

namespace syspgo {
namespace {

constexpr uint64_t kBlock = kErofsBlockSize;
constexpr uint64_t kSuperOffset = 1024;
constexpr uint32_t kMagic = 0xE0F5E1E2;
constexpr uint32_t kCompatSbChecksum = 0x1;
// Incompatible features this layout understands: chunk-based files, and
// compressed data padded at the front of its block (erofs-utils' default).
// Any other (big pclusters, tail packing, a device table) changes what block
// addresses mean or how many blocks one names.
constexpr uint32_t kIncompatZeroPadding = 0x1, kIncompatChunkedFile = 0x4;
constexpr uint32_t kNullBlock = 0xFFFFFFFF;
constexpr uint16_t kChunkIndexes = 0x20;  // 8-byte chunk indexes in place of 4-byte block addresses
constexpr uint16_t kChunkBitsMask = 0x1F;

// A compressed file's full (legacy) index: 8 bytes per 4 KiB of the file,
// after an 8-byte map header and 8 bytes of padding. Each head names the
// one block (4 KiB physical cluster) its extent's compressed bytes lie in;
// the compact index derives addresses by counting, so only the full one
// lets blocks move one by one.
constexpr uint64_t kFullIndexSkip = 16, kFullIndexEntry = 8;
// An entry's type, in its low two bits: 0 plain, 1 head, 2 non-head (a
// cluster inside an extent begun earlier, with no block of its own), 3 a
// head of the second algorithm.
constexpr unsigned kLclusterNonHead = 2;
constexpr uint16_t kDeltaBlockCount = 0x800;  // a non-head's delta[0] that counts a big pcluster's blocks

enum DataLayout : unsigned { kFlatPlain = 0, kCompressedFull = 1, kFlatInline = 2, kCompressedCompact = 3, kChunkBased = 4 };

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
  if ((incompat & ~(kIncompatChunkedFile | kIncompatZeroPadding)) || Le(sb + kSbExtraDevices, 2))
    return MakeError("the EROFS image '" + img.path() + "' uses features this layout does not move blocks under "
                     "(big physical clusters, tail packing or extra devices); make it with 'mkfs.erofs "
                     "--chunksize=4096', or compressed with 'mkfs.erofs -zlz4hc -Elegacy-compress'");
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

// Where one regular file's data lies: the blocks that hold each 4 KiB page
// (a chunk's one block, or every compressed block whose extent overlaps
// the page), and where the image stores each block's address, to patch it
// when the block moves.
struct FileMap {
  std::vector<uint32_t> page_first;  // page p's blocks: blocks[page_first[p] .. page_first[p + 1])
  std::vector<uint32_t> blocks;
  std::vector<std::pair<uint64_t, uint32_t>> addresses;  // (byte offset of a 4-byte address, the block it names)
  uint64_t index_at = 0, index_bytes = 0;                // where the addresses are stored
};

// Records the blocks that bytes [at, at + bytes) of the image lie in.
void AddBlocks(std::set<uint64_t>& blocks, uint64_t at, uint64_t bytes) {
  for (uint64_t b = at / kBlock; bytes && b <= (at + bytes - 1) / kBlock; ++b) blocks.insert(b);
}

// A chunk-based file: one block address per 4 KiB chunk, after the inode
// and its inline xattrs, aligned to the entry's size.
Result<FileMap> ChunkedFileMap(const ImageFile& img, const Inode& in) {
  uint16_t format = static_cast<uint16_t>(in.u);
  if (format & kChunkBitsMask)
    return MakeError("the EROFS image '" + img.path() + "' has chunks larger than 4 KiB; make it with "
                     "'mkfs.erofs --chunksize=4096'");
  const uint64_t unit = (format & kChunkIndexes) ? 8 : 4;
  const uint64_t first = (in.pos + in.body + unit - 1) / unit * unit;
  const uint64_t count = (in.size + kBlock - 1) / kBlock;
  if (count > img.size() / unit) return img.Damaged("a file claims more chunks than the image holds");
  std::vector<unsigned char> raw(count * unit);
  SYSPGO_TRY(img.Read(first, raw.data(), raw.size()));
  FileMap m;
  m.index_at = first, m.index_bytes = raw.size();
  for (uint64_t i = 0; i < count; ++i) {
    const unsigned char* e = &raw[i * unit];
    if (unit == 8 && Le(e + 2, 2)) return img.Damaged("a chunk lies on another device");
    uint64_t at = unit == 8 ? 4 : 0;
    auto block = static_cast<uint32_t>(Le(e + at, 4));
    m.page_first.push_back(static_cast<uint32_t>(m.blocks.size()));
    if (block == kNullBlock) continue;  // a hole
    m.blocks.push_back(block);
    m.addresses.emplace_back(first + i * unit + at, block);
  }
  m.page_first.push_back(static_cast<uint32_t>(m.blocks.size()));
  return m;
}

// A compressed file with the full index: an extent starts at each head
// (4096 * its cluster + its offset) and runs to the next head or the end
// of the file; its compressed bytes lie in the one block the head names.
Result<FileMap> CompressedFileMap(const ImageFile& img, const Inode& in) {
  const uint64_t count = (in.size + kBlock - 1) / kBlock;
  const uint64_t first = (in.pos + in.body + 7) / 8 * 8 + kFullIndexSkip;
  if (count > img.size() / kFullIndexEntry) return img.Damaged("a compressed file claims more clusters than the image holds");
  std::vector<unsigned char> raw(count * kFullIndexEntry);
  SYSPGO_TRY(img.Read(first, raw.data(), raw.size()));
  std::vector<std::pair<uint64_t, uint32_t>> heads;  // (file offset where an extent starts, its block)
  FileMap m;
  m.index_at = first, m.index_bytes = raw.size();
  for (uint64_t i = 0; i < count; ++i) {
    const unsigned char* e = &raw[i * kFullIndexEntry];
    if ((Le(e, 2) & 3) == kLclusterNonHead) {
      if (Le(e + 4, 2) & kDeltaBlockCount)
        return MakeError("the EROFS image '" + img.path() + "' has compressed extents of several blocks; make it "
                         "with 4 KiB physical clusters ('mkfs.erofs -C4096', the default)");
      continue;
    }
    uint64_t offset = Le(e + 2, 2);
    if (offset >= kBlock) return img.Damaged("a compressed extent starts past its cluster");
    // mkfs.erofs ends a file whose last extent began in an earlier cluster
    // with a plain head at or past the end of the file and no block (0):
    // it only marks where the last extent ends.
    if (i * kBlock + offset >= in.size) continue;
    auto block = static_cast<uint32_t>(Le(e + 4, 4));
    heads.emplace_back(i * kBlock + offset, block);
    m.addresses.emplace_back(first + i * kFullIndexEntry + 4, block);
  }
  if (count && (heads.empty() || heads[0].first != 0)) return img.Damaged("a compressed file that starts inside an extent");
  size_t k = 0;  // the extent holding the page's first byte
  for (uint64_t p = 0; p < count; ++p) {
    m.page_first.push_back(static_cast<uint32_t>(m.blocks.size()));
    const uint64_t lo = p * kBlock, hi = std::min(in.size, lo + kBlock);
    while (k + 1 < heads.size() && heads[k + 1].first <= lo) ++k;
    for (size_t j = k; j < heads.size() && heads[j].first < hi; ++j) m.blocks.push_back(heads[j].second);
  }
  m.page_first.push_back(static_cast<uint32_t>(m.blocks.size()));
  return m;
}

Result<std::optional<FileMap>> Some(Result<FileMap> map) {
  if (!map) return map.error();
  return std::optional<FileMap>(std::move(*map));
}

// The map of a file whose data this layout can move; none for data stored
// flat (empty files, inline tails, data mkfs.erofs could not compress),
// which stays where mkfs.erofs put it.
Result<std::optional<FileMap>> FileMapOf(const ImageFile& img, const Inode& in) {
  switch (in.layout) {
    case kChunkBased: return Some(ChunkedFileMap(img, in));
    case kCompressedFull: return Some(CompressedFileMap(img, in));
    case kCompressedCompact:
      return MakeError("the EROFS image '" + img.path() + "' indexes its compressed files compactly, which does "
                       "not let blocks move one by one; make it with 'mkfs.erofs -Elegacy-compress'");
    default: return std::optional<FileMap>();
  }
}

// The bytes of a directory (flat, with or without an inline tail); the
// blocks its inode and entries lie in are added to `meta`.
Result<std::string> DirectoryBytes(const ImageFile& img, const Inode& in, std::set<uint64_t>& meta) {
  if (in.layout != kFlatPlain && in.layout != kFlatInline) return img.Damaged("a directory of an unknown layout");
  if (in.size > img.size()) return img.Damaged("a directory larger than the image");
  std::string data(in.size, '\0');
  uint64_t full = in.layout == kFlatInline ? in.size / kBlock * kBlock : in.size;
  // An inline directory smaller than a block has no block address at all.
  if (full) SYSPGO_TRY(img.Read(uint64_t{in.u} * kBlock, data.data(), full));
  if (full < in.size) SYSPGO_TRY(img.Read(in.pos + in.body, data.data() + full, in.size - full));
  AddBlocks(meta, in.pos, in.body + (in.size - full));
  if (full) AddBlocks(meta, uint64_t{in.u} * kBlock, full);
  return data;
}

// path below the root -> nid, of every regular file; depth-first, adding
// the blocks of each directory to `meta` (DirectoryBytes). A
// directory is walked once: an image that names one twice (a loop, or two
// parents) is refused, where walking it again could go on for ever.
Status WalkFiles(const ImageFile& img, const Super& sb, uint64_t nid, const std::string& prefix, int depth,
                 std::set<uint64_t>& dirs, std::unordered_map<std::string, uint64_t>& files,
                 std::set<uint64_t>& meta) {
  if (depth > 256) return img.Damaged("directories nest deeper than 256");
  if (!dirs.insert(nid).second) return img.Damaged("a directory is reached twice");
  auto dir = ReadInode(img, sb, nid);
  if (!dir) return dir.error();
  auto data = DirectoryBytes(img, *dir, meta);
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
        SYSPGO_TRY(WalkFiles(img, sb, child, path + "/", depth + 1, dirs, files, meta));
      } else if (type == 1) {  // EROFS_FT_REG_FILE
        files.emplace(path, child);
      }
    }
  }
  return {};
}

// Where the data of the image's files lies, by file, and the blocks the
// metadata this reads lies in (which no data address may name: moving one
// would move the superblock, an inode or an index with the data).
struct ImageMaps {
  Super sb;
  std::unordered_map<std::string, uint64_t> files;  // path -> nid
  std::map<uint64_t, FileMap> maps;                 // nid -> where its data lies
  std::set<uint64_t> meta_blocks;
};

Result<ImageMaps> ReadMaps(const ImageFile& img) {
  ImageMaps m;
  auto sb = ReadSuper(img);
  if (!sb) return sb.error();
  m.sb = *sb;
  std::set<uint64_t> dirs;
  m.meta_blocks.insert(0);  // the superblock's
  SYSPGO_TRY(WalkFiles(img, m.sb, m.sb.root_nid, "", 0, dirs, m.files, m.meta_blocks));
  for (const auto& [path, nid] : m.files) {
    if (m.maps.count(nid)) continue;  // a hard link
    auto in = ReadInode(img, m.sb, nid);
    if (!in) return in.error();
    AddBlocks(m.meta_blocks, in->pos, in->body);
    auto map = FileMapOf(img, *in);
    if (!map) return map.error();
    if (!*map) continue;
    AddBlocks(m.meta_blocks, (*map)->index_at, (*map)->index_bytes);
    m.maps.emplace(nid, std::move(**map));
  }
  return m;
}

}  // namespace

std::vector<std::string> MkfsErofsLayoutArgs(const std::string& compressor) {
  if (compressor.empty()) return {"--chunksize=4096"};
  return {"-z" + compressor, "-Elegacy-compress"};
}

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
  const FileMap& fm = map->second;
  for (size_t p = 0; p + 1 < fm.page_first.size(); ++p)
    out.push_back(fm.page_first[p] < fm.page_first[p + 1] ? fm.blocks[fm.page_first[p]] : kNullBlock);
  return out;
}

namespace {

// Where every block address is: `entries` gets (byte offset of the
// address, the block it names), `slots` the data blocks, ascending (where
// data may go).
Status FindDataBlocks(const ImageFile& img, const ImageMaps& m, uint64_t blocks,
                      std::vector<std::pair<uint64_t, uint32_t>>& entries, std::vector<uint32_t>& slots) {
  for (const auto& [nid, map] : m.maps) {
    for (const auto& [at, b] : map.addresses) {
      if (b >= blocks) return img.Damaged("a file's data block lies past the end of the image");
      if (m.meta_blocks.count(b)) return img.Damaged("a file's data block is also where its metadata lies");
      entries.emplace_back(at, b);
      slots.push_back(b);
    }
  }
  std::sort(slots.begin(), slots.end());
  slots.erase(std::unique(slots.begin(), slots.end()), slots.end());
  return {};
}

// The map of each plan file in the image, by plan file (nullptr for one
// that is not laid out, whose reason goes to `out`).
std::vector<const FileMap*> PlanFileMaps(const Plan& plan, const std::string& source_dir, const ImageMaps& m,
                                         ErofsLayout& out) {
  std::vector<const FileMap*> plan_maps(plan.files.size(), nullptr);
  for (size_t i = 0; i < plan.files.size(); ++i) {
    const std::string& path = plan.files[i].path;
    std::string rel = PathInside(source_dir, path);
    auto f = rel.empty() ? m.files.end() : m.files.find(rel);
    if (rel.empty()) out.left_out.push_back(path + ": not under " + source_dir);
    else if (f == m.files.end()) out.left_out.push_back(path + ": not a regular file in the image");
    else if (!m.maps.count(f->second)) ++out.files_flat;
    else {
      plan_maps[i] = &m.maps.at(f->second);
      ++out.files_placed;
    }
  }
  return plan_maps;
}

// The order of the data blocks: the plan's pages as a replay reads them,
// then every other data block where mkfs.erofs put it.
std::vector<uint32_t> BlockOrder(const Plan& plan, const std::vector<const FileMap*>& plan_maps,
                                 const std::vector<uint32_t>& slots, uint64_t blocks, ErofsLayout& out) {
  std::vector<uint32_t> order;
  order.reserve(slots.size());
  std::vector<bool> placed(blocks);
  for (const PlanStep& s : ReplayOrder(plan)) {
    const FileMap* fm = plan_maps[s.file];
    if (!fm) continue;
    const PlanExtent& e = plan.files[s.file].extents[s.extent];
    uint64_t end = std::min<uint64_t>(fm->page_first.size() - 1, (e.offset + e.length) / kBlock);
    for (uint64_t page = e.offset / kBlock; page < end; ++page) {
      for (uint32_t j = fm->page_first[page]; j < fm->page_first[page + 1]; ++j) {
        uint32_t b = fm->blocks[j];
        if (placed[b]) continue;
        placed[b] = true;
        order.push_back(b);
      }
    }
  }
  out.blocks_placed = order.size();
  for (uint32_t b : slots)
    if (!placed[b]) order.push_back(b);
  return order;
}

// Writes the image to `output`, block b from block source[b] of `img`,
// with the block addresses at the byte offsets of `patches` rewritten and
// the superblock's checksum made again if it has one.
Status WritePermuted(const ImageFile& img, const std::string& output, bool checksum, uint64_t blocks,
                     const std::vector<uint32_t>& source, const std::map<uint64_t, uint32_t>& patches) {
  return WriteFileAtomically(output, [&](FILE* f) -> Status {
    std::vector<unsigned char> buf(kBlock);
    auto patch = patches.begin();
    for (uint64_t b = 0; b < blocks; ++b) {
      SYSPGO_TRY(img.Read(uint64_t{source[b]} * kBlock, buf.data(), kBlock));
      for (; patch != patches.end() && patch->first < (b + 1) * kBlock; ++patch) {
        // Addresses are 4-byte aligned (the maps' entries are 4 or 8 bytes, aligned), so none straddles two blocks.
        if (patch->first + 4 > (b + 1) * kBlock) return img.Damaged("a chunk-map entry straddles two blocks");
        for (int i = 0; i < 4; ++i) buf[patch->first - b * kBlock + i] = static_cast<unsigned char>(patch->second >> (8 * i));
      }
      if (b == 0 && checksum) {  // chunk maps may share the superblock's block
        memset(&buf[kSuperOffset + kSbChecksum], 0, 4);
        uint32_t crc = Crc32c(~0u, &buf[kSuperOffset], kBlock - kSuperOffset);
        for (int i = 0; i < 4; ++i) buf[kSuperOffset + kSbChecksum + i] = static_cast<unsigned char>(crc >> (8 * i));
      }
      if (fwrite(buf.data(), 1, kBlock, f) != kBlock) return MakeError(std::string("write failed: ") + strerror(errno));
    }
    // A tail shorter than a block (mkfs.erofs writes whole blocks; kept as it is).
    uint64_t tail = img.size() - blocks * kBlock;
    if (tail) {
      SYSPGO_TRY(img.Read(blocks * kBlock, buf.data(), tail));
      if (fwrite(buf.data(), 1, tail, f) != tail) return MakeError(std::string("write failed: ") + strerror(errno));
    }
    return {};
  });
}

}  // namespace

Result<ErofsLayout> LayOutErofsImage(const std::string& image, const std::string& output, const Plan& plan,
                                     const std::string& source_dir) {
  auto img = ImageFile::Open(image);
  if (!img) return img.error();
  auto m = ReadMaps(*img);
  if (!m) return m.error();
  const uint64_t blocks = img->size() / kBlock;
  std::vector<std::pair<uint64_t, uint32_t>> entries;  // (byte offset of the address, block)
  std::vector<uint32_t> slots;                          // the data blocks, ascending: where data may go
  SYSPGO_TRY(FindDataBlocks(*img, *m, blocks, entries, slots));

  ErofsLayout out;
  out.data_blocks = slots.size();
  std::vector<const FileMap*> plan_maps = PlanFileMaps(plan, source_dir, *m, out);
  std::vector<uint32_t> order = BlockOrder(plan, plan_maps, slots, blocks, out);

  // Slot j (the j-th data block of the image) gets the bytes of order[j].
  std::vector<uint32_t> source(blocks), moved(blocks);  // new -> old, old -> new
  for (uint64_t b = 0; b < blocks; ++b) source[b] = moved[b] = static_cast<uint32_t>(b);
  for (size_t j = 0; j < slots.size(); ++j) {
    moved[order[j]] = slots[j];
    source[slots[j]] = order[j];
  }
  std::map<uint64_t, uint32_t> patches;  // byte offset of a chunk-map address -> its new block
  for (const auto& [at, b] : entries) patches[at] = moved[b];
  SYSPGO_TRY(WritePermuted(*img, output, m->sb.checksum, blocks, source, patches));
  return out;
}

Result<ErofsLayout> BuildErofsImage(const std::string& source_dir, const std::string& output, const Plan& plan,
                                    const std::string& compressor) {
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
    spec.argv = {"mkfs.erofs", "--quiet"};
    for (const std::string& arg : MkfsErofsLayoutArgs(compressor)) spec.argv.push_back(arg);
    spec.argv.push_back(raw);
    spec.argv.push_back(source_dir);
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
