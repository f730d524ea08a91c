// SPDX-License-Identifier: GPL-2.0-only
/*
 * runas UID PROG [ARGS...]: run PROG as user and group UID, with no
 * supplementary groups and no capabilities left.  busybox has neither
 * setpriv --reuid nor chpst; the guests have no /etc/passwd, and need
 * none for a numeric uid.  Must be started as root.  Exit status 127 if
 * the switch or the exec fails.
 * Build: gcc -static -O2 runas.c -o runas
 */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char *end;
	unsigned long id;

	if (argc < 3) {
		fprintf(stderr, "usage: runas UID PROG [ARGS...]\n");
		return 127;
	}
	errno = 0;
	id = strtoul(argv[1], &end, 10);
	if (errno || *end || !*argv[1] || !id || id > 65535) {
		fprintf(stderr, "runas: bad uid '%s'\n", argv[1]);
		return 127;
	}
	/* groups first: without CAP_SETGID they cannot be dropped */
	if (setgroups(0, NULL) || setgid((gid_t)id) || setuid((uid_t)id)) {
		fprintf(stderr, "runas: becoming %lu: %s\n", id, strerror(errno));
		return 127;
	}
	if (!setuid(0)) {
		fprintf(stderr, "runas: could become root again\n");
		return 127;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "runas: %s: %s\n", argv[2], strerror(errno));
	return 127;
}
