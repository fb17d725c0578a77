/* ===- mm.bpf.h - reading folios and mappings from BPF ----------------=== */
/* The faults and pagecache groups both name a page by its file (s_dev,
 * i_ino of mapping->host) and page index, and need a folio's size; the
 * layout of struct folio moves between kernels, so the reads live here once. */
#ifndef SYSPGO_MM_BPF_H
#define SYSPGO_MM_BPF_H

#include "common.bpf.h"

#define SYSPGO_PAGE_SHIFT 12
#define SYSPGO_PG_HEAD 6 /* enum pageflags PG_head, stable since 4.x (x86_64) */

/* Direct loads (`m` is a typed kernel pointer, a tracepoint's argument or a
 * folio's field): this runs for every page added to or deleted from the
 * cache and every file fault, where a helper call per hop was most of the
 * cost. A NULL mapping gives 0, 0. */
static __always_inline void mapping_file(struct address_space *m, __u64 *dev, __u64 *ino)
{
	*dev = *ino = 0;
	if (!m)
		return;
	struct inode *host = m->host;
	*dev = host->i_sb->s_dev;
	*ino = host->i_ino;
}

/* Pages in the folio: 1 << order, where the order of a large folio sits in
 * the low byte of the first tail page's flags. Kernel 6.18 wrapped
 * folio->flags in memdesc_flags_t ("mm: introduce memdesc_flags_t"); a raw
 * read of the first 8 bytes at the relocated offset works on both layouts. */
static __always_inline __u64 folio_pages(struct folio *folio)
{
	__u64 flags = 0, flags1 = 0;
	bpf_core_read(&flags, sizeof(flags), &folio->flags);
	if (!(flags & (1ULL << SYSPGO_PG_HEAD)))
		return 1;
	bpf_core_read(&flags1, sizeof(flags1), &folio->_flags_1);
	return 1ULL << (flags1 & 0xff);
}

#endif
