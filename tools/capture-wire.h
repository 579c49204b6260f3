/* SPDX-License-Identifier: MIT */
/*
 * What the cxltier valgrind tool (tools/capture-valgrind.c) sends
 * cxltier-capture (tools/capture.c) on the pipe: 16-byte records in the
 * host's byte order, for each window of instructions every 4 KiB page it
 * touched with its access count, then a window-end record.  The last
 * record, at the program's exit, carries the instructions executed; one
 * before each exec(2) the count so far.
 * Plain C types only: the tool is built without libc.
 */
#ifndef CXLT_CAPTURE_WIRE_H
#define CXLT_CAPTURE_WIRE_H

struct capture_rec {
	unsigned long long page;	/* a page number, or one of the two below */
	unsigned long long n;		/* accesses; or the instruction count */
};

#define CAPTURE_WINDOW_END (~0ULL)	/* n: the window's end, in instructions */
#define CAPTURE_EXIT (~0ULL - 1)	/* n: instructions executed in all */
#define CAPTURE_SO_FAR (~0ULL - 2)	/* n: instructions so far (before an exec) */

#endif
