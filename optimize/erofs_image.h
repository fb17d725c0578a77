//===- erofs_image.h - EROFS images whose data lies in first-touch order ----===//
//
// A plan fixes when a cold start's pages are read; an image can fix where
// they lie. mksquashfs -sort orders whole files, and squashfs reads a
// block at a time; EROFS reads its uncompressed data with the block layer's
// ordinary asynchronous I/O (iomap), as a directory on disk would be read.
// Debian bookworm's mkfs.erofs (erofs-utils 1.5) cannot choose the data
// order, but two of its layouts name every data block by its own 4-byte
// address: with `--chunksize=4096` each 4 KiB chunk of a file, and,
// compressed with the full index (`-zlz4hc -Elegacy-compress`), each 4 KiB
// physical cluster (one block of compressed bytes whose extent may span
// several pages). So the image is made by mkfs.erofs and then its data
// blocks are permuted: the blocks holding the plan's pages first, in
// replay order (optimize/plan.h ReplayOrder), then the rest in the order
// mkfs.erofs left them, and each address is rewritten to match. A replay of
// the plan from the mounted image then reads one contiguous run of the
// image; compressed, fewer bytes of it. Data mkfs.erofs stores flat (empty
// files, inline tails, data that does not compress) stays where it lies.
//
// Facts of the on-disk format this relies on (erofs-utils 1.5
// include/erofs_fs.h, lib/blobchunk.c; the kernel's fs/erofs): a 128-byte
// superblock at byte 1024, whose crc32c (seed ~0, no final xor, over bytes
// 1024..4095 with the checksum field zeroed) is checked at mount when
// feature_compat has SB_CHKSUM; inodes at meta_blkaddr * 4096 + nid * 32,
// compact (32 bytes) or extended (64 bytes); a chunk-based file's map
// follows its inode and inline xattrs, aligned to its entry size; a
// compressed file's full index follows them 8-byte aligned, after a 16-byte
// header, one 8-byte entry per 4 KiB of the file (the kernel's
// fs/erofs/zmap.c z_erofs_load_full_lcluster).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "optimize/plan.h"

namespace syspgo {

// The only block size the layout takes (mkfs.erofs's default).
constexpr uint64_t kErofsBlockSize = 4096;

// What the layout did.
struct ErofsLayout {
  size_t files_placed = 0;            // plan files found in the image and laid out first
  size_t files_flat = 0;              // plan files whose data mkfs.erofs stored flat, left where they lie
  uint64_t blocks_placed = 0;         // 4 KiB blocks of the plan's extents laid out first
  uint64_t data_blocks = 0;           // the image's data blocks that can move
  std::vector<std::string> left_out;  // "PATH: why" for each plan file not laid out
};

// Writes `output` (WriteFileAtomically: the user's rights under sudo): the
// EROFS image `image`, made by mkfs.erofs from `source_dir` with
// MkfsErofsLayoutArgs, with its data blocks in the replay order of `plan`.
// Plan files under `source_dir` are found in the image by their path below
// it; the others are left out. An image of another kind (compact indexes,
// big physical clusters, other chunk or block sizes, extra devices) is
// refused with an error naming it.
Result<ErofsLayout> LayOutErofsImage(const std::string& image, const std::string& output, const Plan& plan,
                                     const std::string& source_dir);

// The mkfs.erofs options of a layout this file can move: 4 KiB chunks, or
// with `compressor` ("lz4", "lz4hc") compressed with the full index.
std::vector<std::string> MkfsErofsLayoutArgs(const std::string& compressor);

// Runs mkfs.erofs on `source_dir` into a private directory beside `output`
// and lays the image out as LayOutErofsImage does; `compressor` as in
// MkfsErofsLayoutArgs, empty for an uncompressed image.
Result<ErofsLayout> BuildErofsImage(const std::string& source_dir, const std::string& output, const Plan& plan,
                                    const std::string& compressor = "");

// The image block of every 4 KiB page of the regular file at `path` (below
// the image's root, no leading slash) in `image`, in file order: for a
// compressed file the block of the extent holding the page's first byte; a
// hole is UINT32_MAX, and a file stored flat has none. For tests and benches that check where a layout put a file.
Result<std::vector<uint32_t>> ErofsFileBlocks(const std::string& image, const std::string& path);

}  // namespace syspgo
