/* ===- pc_touch.c - a page-cache-heavy workload --------------------------=== */
/* Maps a file and touches one byte per page: with a cold cache every touch
 * is a file fault that adds pages to the page cache (fault-around adds 16). */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	int fd = open(argv[1], O_RDONLY);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb))
		return 1;
	volatile const char *p = mmap(0, sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return 1;
	unsigned long sum = 0;
	for (off_t off = 0; off < sb.st_size; off += 4096)
		sum += p[off];
	printf("%lu\n", sum & 1);
	return 0;
}
