/* SPDX-License-Identifier: MIT */
/*
 * What stands behind the data path's calls into the machine: move_pages(2),
 * the page touch of the -ENOENT retry, page flags, splitting and collapsing
 * huge pages, and the clock that refills the migration budget.  The live agent uses the kernel
 * (platform_kernel); cxltier-replay puts its two-tier model here, and unit
 * tests a fake, each through their own ctx: no global to swap.
 */
#ifndef CXLT_PLATFORM_H
#define CXLT_PLATFORM_H

#include <stdbool.h>
#include <stdint.h>

struct platform {
	/* move_pages(2): nodes NULL queries where the pages are; -1 and errno on failure. */
	long (*move_pages)(void *ctx, int pid, unsigned long count, void **pages,
			   const int *nodes, int *status, int flags);
	/* Reads a byte of each page on the owner's behalf (maps a PROT_NONE page back). */
	void (*touch_pages)(void *ctx, int pid, void **pages, uint32_t count);
	/*
	 * Optional: sets present[i] when pages[i] is mapped (PROT_NONE ones
	 * too), from the owner's pagemap; 0 or -errno.  NULL: nothing known.
	 */
	int (*pages_present)(void *ctx, int pid, void **pages, uint32_t count, bool *present);
	/*
	 * Optional: whether page frame pfn heads a transparent huge page.  512
	 * frames in a row can be base pages allocated in a row (a migration
	 * fills a node that way); only the kernel's page flags tell.  NULL: never.
	 */
	bool (*pfn_thp)(void *ctx, uint64_t pfn);
	/*
	 * Optional: splits the transparent huge page that holds page (in pid)
	 * into 4 KiB pages where they are, and advises that page cold; 0 or
	 * -errno.  NULL: huge pages move whole.
	 */
	int (*split_huge)(void *ctx, int pid, uint64_t page);
	/*
	 * Optional: whether a transparent huge page maps the 2 MiB at addr (in
	 * pid, aligned) now: 1 or 0, or -errno where the kernel does not say
	 * (page frames read 0 without CAP_SYS_ADMIN).  A split may not take,
	 * and khugepaged collapses a split range again: move_pages(2) of one
	 * of its pages then moves all 512.  NULL: never known.
	 */
	int (*huge_at)(void *ctx, int pid, uint64_t addr);
	/* Optional: collapses the len bytes at addr (a huge page's, aligned) into a huge page; 0 or -errno. */
	int (*collapse_huge)(void *ctx, int pid, uint64_t addr, uint64_t len);
	/* Seconds on the budget's clock: monotonic live, the epoch's end in replay. */
	double (*now)(void *ctx);
	void *ctx;
};

/* The running kernel: move_pages(2) and process_vm_readv(2). */
extern const struct platform platform_kernel;

#endif
