/* ===- floorread.c - how fast the disk delivers a list of ranges -----=== */
/* The cold-start bench's floors: reads the ranges listed on stdin, one
 * "PATH\tOFFSET\tLENGTH" per line, with O_DIRECT (nothing enters the page
 * cache), DEPTH threads each taking the next range in list order, so up to
 * DEPTH requests are in flight. Prints the wall time of the reads in ns
 * (opening the files and parsing the list are not timed). Written in C so
 * that a plan's thousands of small extents cost a syscall each, not an
 * interpreter's turn: in Python, the extents of the story-2 plan took
 * longer to read than the replay itself.
 *
 * usage: floorread DEPTH < ranges */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_REQUEST (1 << 20)

struct range {
	int fd;
	long long offset, length;
};

static struct range *ranges;
static size_t nranges;
static atomic_size_t next_range;

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void *work(void *arg)
{
	(void)arg;
	void *buf;
	if (posix_memalign(&buf, 4096, MAX_REQUEST) != 0) {
		fprintf(stderr, "floorread: out of memory\n");
		exit(1);
	}
	for (;;) {
		size_t i = atomic_fetch_add(&next_range, 1);
		if (i >= nranges)
			break;
		struct range *r = &ranges[i];
		/* O_DIRECT wants whole blocks: round the length up to a page. */
		size_t len = (size_t)((r->length + 4095) / 4096 * 4096);
		if (pread(r->fd, buf, len, r->offset) < 0) {
			fprintf(stderr, "floorread: read at %lld: %s\n", r->offset, strerror(errno));
			exit(1);
		}
	}
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	int depth = argc == 2 ? atoi(argv[1]) : 0;
	if (depth < 1 || depth > 1024) {
		fprintf(stderr, "usage: floorread DEPTH < ranges  (DEPTH 1..1024; lines PATH<tab>OFFSET<tab>LENGTH)\n");
		return 2;
	}
	char *line = NULL, *last_path = NULL;
	size_t cap = 0, alloc = 0;
	int last_fd = -1;
	while (getline(&line, &cap, stdin) > 0) {
		char *tab1 = strchr(line, '\t');
		char *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
		if (!tab2) {
			fprintf(stderr, "floorread: bad line (want PATH<tab>OFFSET<tab>LENGTH): %s", line);
			return 2;
		}
		*tab1 = '\0';
		if (!last_path || strcmp(last_path, line) != 0) {
			/* The list mostly keeps to one file for a while; a file named
			 * again later is opened again, which costs nothing timed. */
			free(last_path);
			last_path = strdup(line);
			last_fd = open(line, O_RDONLY | O_DIRECT);
			if (last_fd < 0) {
				fprintf(stderr, "floorread: cannot open %s: %s\n", line, strerror(errno));
				return 1;
			}
		}
		long long off = atoll(tab1 + 1), len = atoll(tab2 + 1);
		if (len <= 0 || len > MAX_REQUEST || off % 4096 != 0) {
			fprintf(stderr, "floorread: range %lld+%lld of %s is not a page-aligned request of at most 1 MiB\n",
				off, len, line);
			return 2;
		}
		if (nranges == alloc) {
			alloc = alloc ? 2 * alloc : 1024;
			ranges = realloc(ranges, alloc * sizeof *ranges);
			if (!ranges) {
				fprintf(stderr, "floorread: out of memory\n");
				return 1;
			}
		}
		ranges[nranges++] = (struct range){last_fd, off, len};
	}
	pthread_t threads[1024];
	long long t0 = now_ns();
	for (int t = 0; t < depth; ++t)
		pthread_create(&threads[t], NULL, work, NULL);
	for (int t = 0; t < depth; ++t)
		pthread_join(threads[t], NULL);
	printf("%lld\n", now_ns() - t0);
	return 0;
}
