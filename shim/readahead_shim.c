/*===- readahead_shim.c - libsyspgo-readahead.so: a readahead plan, applied ===//
 * `syspgo prefetch --readahead FILE -- CMD` starts CMD with this library in
 * LD_PRELOAD and FILE's absolute path in SYSPGO_READAHEAD (the plan's format
 * and these variables: readahead_format.h). Readahead advice
 * belongs to one open file (posix_fadvise) or one process's mappings
 * (madvise), so only the program itself can take it; this library gives it
 * on the program's behalf, for the files the plan names (by st_dev and
 * st_ino; optimize/readahead_plan.h says how they are chosen):
 *  - at load, every mapping of a listed file in /proc/self/maps (the
 *    executable, and the libraries ld.so mapped before any constructor ran,
 *    with mmap calls of its own that nothing can interpose) gets
 *    MADV_RANDOM or MADV_SEQUENTIAL. Libraries dlopen()ed later are mapped
 *    by ld.so too, and are not advised: wrapping dlopen() would make this
 *    library its caller, whose RUNPATH and namespace ld.so searches by;
 *  - each open/openat/fopen of a listed file gets POSIX_FADV_RANDOM or
 *    POSIX_FADV_SEQUENTIAL, and each mmap of one the madvise.
 * It is plain C and links libc alone, so it adds no runtime to the program.
 * The plan may come from anyone: it is read strictly (header, line syntax,
 * sizes capped), and any fault found in it leaves the library doing
 * nothing. Nothing it does can fail the program: the calls it wraps return
 * what they would have, errno included. Static and setuid programs ignore
 * LD_PRELOAD, and so get no advice (docs/coldstart.md).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "shim/readahead_format.h"

#define EXPORT __attribute__((visibility("default")))

enum { kAdviceRandom = 1, kAdviceSequential = 2 };

struct entry {
  uint64_t dev, ino;
  int advice;
};

/* Set once, by the constructor, before the program's own code runs; read
 * only afterwards. */
static struct entry* entries;
static size_t n_entries;

static const char kHeader[] = SYSPGO_READAHEAD_HEADER "\n";

/* A decimal number filling [s, e) exactly; 0 if it is not one. */
static int parse_u64(const char* s, const char* e, uint64_t* out) {
  uint64_t v = 0;
  if (s == e || e - s > 20) return 0;
  for (; s < e; ++s) {
    if (*s < '0' || *s > '9') return 0;
    uint64_t d = (uint64_t)(*s - '0');
    if (v > (UINT64_MAX - d) / 10) return 0;
    v = v * 10 + d;
  }
  *out = v;
  return 1;
}

/* The end of the tab-separated field starting at s, within [s, e). */
static const char* field_end(const char* s, const char* e) {
  const char* t = memchr(s, '\t', (size_t)(e - s));
  return t ? t : e;
}

/* Whether the field [s, e) is `word`. */
static int is_field(const char* s, const char* e, const char* word) {
  size_t n = strlen(word);
  return (size_t)(e - s) == n && !memcmp(s, word, n);
}

static int by_dev_ino(const void* a, const void* b) {
  const struct entry* x = a;
  const struct entry* y = b;
  if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
  if (x->ino != y->ino) return x->ino < y->ino ? -1 : 1;
  return 0;
}

/* Parses one line [s, e) (no newline) into *out. Returns 1 for a file line
 * with advice, 0 for a line to skip, -1 for a line that is no part of the
 * format. */
static int parse_line(const char* s, const char* e, struct entry* out) {
  if (s == e || *s == SYSPGO_READAHEAD_COMMENT) return 0;
  const char* f = field_end(s, e);
  if (is_field(s, f, SYSPGO_READAHEAD_DEVICE_LINE)) return 0;
  if (!is_field(s, f, SYSPGO_READAHEAD_FILE_LINE) || f == e) return -1;
  const char* a = f + 1;
  const char* ae = field_end(a, e);
  int advice;
  if (is_field(a, ae, SYSPGO_READAHEAD_RANDOM)) advice = kAdviceRandom;
  else if (is_field(a, ae, SYSPGO_READAHEAD_SEQUENTIAL)) advice = kAdviceSequential;
  else if (is_field(a, ae, SYSPGO_READAHEAD_DEFAULT)) advice = 0;
  else return -1;
  if (ae == e) return -1;
  const char* d = ae + 1;
  const char* de = field_end(d, e);
  if (de == e) return -1;
  const char* i = de + 1;
  const char* ie = field_end(i, e);
  if (!parse_u64(d, de, &out->dev) || !parse_u64(i, ie, &out->ino)) return -1;
  out->advice = advice;
  return advice ? 1 : 0;
}

/* Not through open() above, which is ours. Non-blocking: a FIFO planted at
 * the plan's path must not hang the program. */
static int raw_open(const char* path) {
  return (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
}

/* Reads the plan at `path` into entries; on any fault, leaves none. */
static void load_plan(const char* path) {
  int fd = raw_open(path);
  if (fd < 0) return;
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size > kReadaheadMaxPlanBytes) {
    close(fd);
    return;
  }
  char* buf = malloc(kReadaheadMaxPlanBytes + 1);
  size_t len = 0;
  if (buf) {
    for (;;) {
      ssize_t n = read(fd, buf + len, kReadaheadMaxPlanBytes + 1 - len);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      len += (size_t)n;
      if (len > kReadaheadMaxPlanBytes) break;
    }
  }
  close(fd);
  if (!buf || len > kReadaheadMaxPlanBytes || len < sizeof kHeader - 1 || memcmp(buf, kHeader, sizeof kHeader - 1) ||
      buf[len - 1] != '\n') {
    free(buf);
    return;
  }
  size_t lines = 0;
  for (size_t k = 0; k < len; ++k) lines += buf[k] == '\n';
  struct entry* out = malloc(lines * sizeof *out);
  size_t n = 0;
  int ok = out != NULL;
  for (const char* s = buf + sizeof kHeader - 1; ok && s < buf + len;) {
    const char* e = memchr(s, '\n', (size_t)(buf + len - s));
    if (e - s > kReadaheadMaxLineBytes || memchr(s, '\0', (size_t)(e - s))) ok = 0;
    else {
      int r = parse_line(s, e, &out[n]);
      if (r < 0) ok = 0;
      n += r > 0;
    }
    s = e + 1;
  }
  free(buf);
  if (!ok || n == 0) {
    free(out);
    return;
  }
  qsort(out, n, sizeof *out, by_dev_ino);
  entries = out;
  n_entries = n;
}

static int advice_of(uint64_t dev, uint64_t ino) {
  struct entry key = {dev, ino, 0};
  const struct entry* e = n_entries ? bsearch(&key, entries, n_entries, sizeof key, by_dev_ino) : NULL;
  return e ? e->advice : 0;
}

static int advice_of_fd(int fd) {
  struct stat sb;
  if (!n_entries || fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) return 0;
  return advice_of((uint64_t)sb.st_dev, (uint64_t)sb.st_ino);
}

static void advise_fd(int fd) {
  int saved = errno;
  int a = advice_of_fd(fd);
  if (a) posix_fadvise(fd, 0, 0, a == kAdviceRandom ? POSIX_FADV_RANDOM : POSIX_FADV_SEQUENTIAL);
  errno = saved;
}

static void advise_range(void* addr, size_t len, int a) {
  if (a) madvise(addr, len, a == kAdviceRandom ? MADV_RANDOM : MADV_SEQUENTIAL);
}

/* A hexadecimal number at *s, ending at `stop`; moves *s past the stop. */
static int scan_hex(const char** s, const char* e, char stop, uint64_t* out) {
  uint64_t v = 0;
  const char* p = *s;
  int digits = 0;
  for (; p < e && *p != stop; ++p, ++digits) {
    int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
    if (d < 0 || digits >= 16) return 0;
    v = v << 4 | (uint64_t)d;
  }
  if (p == e || !digits) return 0;
  *out = v;
  *s = p + 1;
  return 1;
}

/* One line of /proc/self/maps: "start-end perms offset MAJ:MIN inode path". */
static void advise_map_line(const char* s, const char* e) {
  uint64_t start, end, maj, min, ino = 0;
  if (!scan_hex(&s, e, '-', &start) || !scan_hex(&s, e, ' ', &end)) return;
  for (int skip = 0; skip < 2; ++skip) {  /* perms, offset */
    const char* sp = memchr(s, ' ', (size_t)(e - s));
    if (!sp) return;
    s = sp + 1;
  }
  if (!scan_hex(&s, e, ':', &maj) || !scan_hex(&s, e, ' ', &min)) return;
  const char* ie = s;
  while (ie < e && *ie >= '0' && *ie <= '9') ++ie;
  if (!parse_u64(s, ie, &ino) || ino == 0 || end <= start) return;
  advise_range((void*)(uintptr_t)start, (size_t)(end - start), advice_of(makedev(maj, min), ino));
}

/* Every mapping of a listed file, as the process has them now. */
static void advise_maps(void) {
  if (!n_entries) return;
  int saved = errno;
  int fd = raw_open("/proc/self/maps");
  if (fd < 0) {
    errno = saved;
    return;
  }
  char buf[16384];
  size_t have = 0;
  for (;;) {
    ssize_t n = read(fd, buf + have, sizeof buf - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    have += (size_t)n;
    char* s = buf;
    char* nl;
    while ((nl = memchr(s, '\n', (size_t)(buf + have - s)))) {
      advise_map_line(s, nl);
      s = nl + 1;
    }
    have = (size_t)(buf + have - s);
    memmove(buf, s, have);
    if (have == sizeof buf) have = 0;  /* a line longer than the buffer: a path no plan names */
  }
  close(fd);
  errno = saved;
}

/* SYSPGO_READAHEAD_SKIP: "DEV:INO,DEV:INO,..." of files a prefetch plan
 * replays beside the program (the replayer sets it): their used pages are
 * on their way, and where the program gets ahead of the replay a window
 * around its fault catches up sooner than single pages. Left to the
 * kernel. A list that does not parse leaves no advice at all. */
static void apply_skips(const char* list) {
  for (const char* s = list; *s;) {
    const char* colon = strchr(s, ':');
    const char* end = strchr(s, ',');
    if (!end) end = s + strlen(s);
    struct entry key = {0, 0, 0};
    if (!colon || colon > end || !parse_u64(s, colon, &key.dev) || !parse_u64(colon + 1, end, &key.ino)) {
      n_entries = 0;
      return;
    }
    struct entry* e = n_entries ? bsearch(&key, entries, n_entries, sizeof key, by_dev_ino) : NULL;
    if (e) e->advice = 0;
    s = *end ? end + 1 : end;
  }
}

__attribute__((constructor)) static void syspgo_readahead_init(void) {
  const char* plan = getenv(SYSPGO_READAHEAD_ENV);
  if (!plan || plan[0] != '/') return;
  load_plan(plan);
  const char* skip = getenv(SYSPGO_READAHEAD_SKIP_ENV);
  if (skip) apply_skips(skip);
  advise_maps();
}

typedef int (*openat_fn)(int, const char*, int, ...);
typedef FILE* (*fopen_fn)(const char*, const char*);
typedef void* (*mmap_fn)(void*, size_t, int, int, int, off_t);

/* real_NAME: the next definition of NAME (libc's), looked up once. */
#define REAL(type, name)                                   \
  static type real_##name;                                 \
  if (!real_##name) {                                      \
    void* p = dlsym(RTLD_NEXT, #name);                     \
    __atomic_store_n(&real_##name, (type)p, __ATOMIC_RELAXED); \
  }

static mode_t mode_arg(int flags, va_list ap) {
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

static int opened(int fd) {
  if (fd >= 0) advise_fd(fd);
  return fd;
}

static int do_openat(int dirfd, const char* path, int flags, mode_t mode) {
  REAL(openat_fn, openat);
  if (real_openat) return opened(real_openat(dirfd, path, flags, mode));
  long r = syscall(SYS_openat, dirfd, path, flags, mode);
  return opened((int)r);
}

EXPORT int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  return do_openat(AT_FDCWD, path, flags, mode);
}

EXPORT int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  return do_openat(AT_FDCWD, path, flags | O_LARGEFILE, mode);
}

EXPORT int openat(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  return do_openat(dirfd, path, flags, mode);
}

EXPORT int openat64(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  return do_openat(dirfd, path, flags | O_LARGEFILE, mode);
}

/* What _FORTIFY_SOURCE builds call for open(path, flags) without a mode. */
EXPORT int __open_2(const char* path, int flags) { return do_openat(AT_FDCWD, path, flags, 0); }
EXPORT int __open64_2(const char* path, int flags) { return do_openat(AT_FDCWD, path, flags | O_LARGEFILE, 0); }
EXPORT int __openat_2(int dirfd, const char* path, int flags) { return do_openat(dirfd, path, flags, 0); }
EXPORT int __openat64_2(int dirfd, const char* path, int flags) {
  return do_openat(dirfd, path, flags | O_LARGEFILE, 0);
}

/* fopen or fopen64, as `real` is; the stream's file advised. */
static FILE* call_fopen(fopen_fn real, const char* path, const char* mode) {
  if (!real) {
    errno = ENOSYS;
    return NULL;
  }
  FILE* f = real(path, mode);
  if (f) advise_fd(fileno(f));
  return f;
}

EXPORT FILE* fopen(const char* path, const char* mode) {
  REAL(fopen_fn, fopen);
  return call_fopen(real_fopen, path, mode);
}

EXPORT FILE* fopen64(const char* path, const char* mode) {
  REAL(fopen_fn, fopen64);
  return call_fopen(real_fopen64, path, mode);
}

static void* mapped(void* p, size_t len, int flags, int fd) {
  if (p != MAP_FAILED && !(flags & MAP_ANONYMOUS) && n_entries) {
    int saved = errno;
    advise_range(p, len, advice_of_fd(fd));
    errno = saved;
  }
  return p;
}

EXPORT void* mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  REAL(mmap_fn, mmap);
  if (!real_mmap) return (void*)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
  return mapped(real_mmap(addr, len, prot, flags, fd, off), len, flags, fd);
}

EXPORT void* mmap64(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  return mmap(addr, len, prot, flags, fd, off);
}
