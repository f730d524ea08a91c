// SPDX-License-Identifier: GPL-2.0-only
/*
 * knc-insmod: load one kernel module with exactly one finit_module(2)
 * call, for the test initramfs.
 *
 * busybox insmod falls back to init_module(2) when finit_module(2) fails,
 * so a module whose init fails would run its init twice and log twice.
 *
 *	knc-insmod MODULE.ko [PARAMS]
 *
 * Exits 0 on success, otherwise with the errno of the failed call (19 for
 * ENODEV) after printing "knc-insmod: MODULE.ko: <strerror> (errno N)".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *params = argc > 2 ? argv[2] : "";
	int fd, err;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s MODULE.ko [PARAMS]\n", argv[0]);
		return 2;
	}

	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		fprintf(stderr, "knc-insmod: %s: %s (errno %d)\n", argv[1],
			strerror(err), err);
		return err;
	}

	if (syscall(SYS_finit_module, fd, params, 0) != 0) {
		err = errno;
		fprintf(stderr, "knc-insmod: %s: %s (errno %d)\n", argv[1],
			strerror(err), err);
		close(fd);
		return err;
	}

	close(fd);
	return 0;
}
