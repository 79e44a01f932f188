/* SPDX-License-Identifier: MIT */
/* ctor.c -- a preloaded library whose constructor asks for durability, from
 * four threads at once, possibly before libeatmydata's constructor has run.
 * The file comes from EMD_CTOR_FILE. */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static void *sync_it(void *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_SYNC, 0644);

	if (fd >= 0) {
		if (write(fd, "x", 1) == 1)
			fsync(fd);
		close(fd);
	}
	return NULL;
}

__attribute__((constructor)) static void early(void)
{
	const char *path = getenv("EMD_CTOR_FILE");
	pthread_t t[4];

	if (!path)
		return;
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, sync_it, (void *)path);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
}
