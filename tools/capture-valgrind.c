// SPDX-License-Identifier: MIT
/*
 * The cxltier valgrind tool: a program's accesses per 4 KiB page, counted
 * inside valgrind, sent to cxltier-capture window by window.
 *
 * Why not lackey: lackey prints a line per instruction and per access, and
 * valgrind writes each line with a write(2) of its own, so a capture of a
 * few hundred million accesses spent more time in the kernel than in the
 * program (make traces: 9.5 minutes, 10 of them system time on two CPUs).
 * This tool instruments what lackey's --trace-mem=yes does (loads, stores,
 * guarded ones, a dirty helper's memory, compare-and-swap, load-linked and
 * store-conditional; a modify is a load and a store: two accesses), counts
 * instructions as lackey's "I" lines do, and writes only the per-window
 * page counts (tools/capture-wire.h).  tests/cli/capture.sh holds the two
 * to the same counts.
 *
 * Built against the valgrind Debian ships (its libcoregrind and libvex) and
 * run with VALGRIND_LIB pointing at a directory that holds it beside
 * valgrind's own files: cxltier-capture does both.  Options:
 *   --cxlt-fd=N       the pipe to write to (required)
 *   --cxlt-window=N   instructions per window (default 1,000,000)
 */
#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_vkiscnums.h"

#include "capture-wire.h"

/*
 * Moves a file descriptor into valgrind's reserved range, where the
 * program cannot close or reuse it (what --log-fd gets).  Not in the tool
 * headers; part of the core every tool is linked with.
 */
extern Int VG_(safe_fd)(Int oldfd);

static Long clo_fd = -1;
static Long clo_window = 1000000;

static Int out_fd = -1;
static ULong instrs, window_end;

/* Accesses per page in the window: open addressing on the page number. */
static ULong *tab_page, *tab_n;	/* ~0: empty */
static SizeT tab_cap, tab_used;
static ULong last_page = ~0ULL;	/* the page of the last access, found at *last_n */
static ULong *last_n;

static struct capture_rec obuf[4096];
static UInt onr;

static void out_flush(void)
{
	const char *p = (const char *)obuf;
	Int left = (Int)(onr * sizeof(obuf[0]));

	onr = 0;
	if (out_fd < 0)
		return;
	while (left > 0) {
		Int n = VG_(write)(out_fd, p, left);

		if (n <= 0) {
			VG_(fmsg)("cxltier: cannot write to cxltier-capture (error %d): stopping\n", -n);
			VG_(exit)(1);
		}
		p += n;
		left -= n;
	}
}

static void out_rec(ULong page, ULong n)
{
	if (onr == sizeof(obuf) / sizeof(obuf[0]))
		out_flush();
	obuf[onr].page = page;
	obuf[onr].n = n;
	onr++;
}

static SizeT slot(ULong page, SizeT cap)
{
	return (SizeT)((page * 0x9E3779B97F4A7C15ULL) >> 20) & (cap - 1);
}

static void tab_alloc(SizeT cap)
{
	ULong *page = VG_(malloc)("cxltier.pages", cap * sizeof(ULong));
	ULong *n = VG_(calloc)("cxltier.counts", cap, sizeof(ULong));

	VG_(memset)(page, 0xff, cap * sizeof(ULong));
	for (SizeT i = 0; i < tab_cap; i++) {
		SizeT j;

		if (tab_page[i] == ~0ULL)
			continue;
		for (j = slot(tab_page[i], cap); page[j] != ~0ULL; j = (j + 1) & (cap - 1))
			;
		page[j] = tab_page[i];
		n[j] = tab_n[i];
	}
	if (tab_page) {
		VG_(free)(tab_page);
		VG_(free)(tab_n);
	}
	tab_page = page;
	tab_n = n;
	tab_cap = cap;
	last_page = ~0ULL;
}

static ULong *find(ULong page)
{
	SizeT j;

	if ((tab_used + 1) * 2 > tab_cap)
		tab_alloc(tab_cap * 2);
	for (j = slot(page, tab_cap); tab_page[j] != ~0ULL; j = (j + 1) & (tab_cap - 1))
		if (tab_page[j] == page)
			return &tab_n[j];
	tab_page[j] = page;
	tab_used++;
	return &tab_n[j];
}

static VG_REGPARM(1) void access1(Addr a)
{
	ULong page = (ULong)a >> 12;

	if (page != last_page) {
		last_n = find(page);
		last_page = page;
	}
	*last_n += 1;
}

static VG_REGPARM(1) void access2(Addr a)
{
	access1(a);
	*last_n += 1;
}

/* The window's pages and counts, then its end; the table emptied. */
static void end_window(ULong end)
{
	for (SizeT i = 0; i < tab_cap; i++) {
		if (tab_page[i] == ~0ULL)
			continue;
		out_rec(tab_page[i], tab_n[i]);
		tab_page[i] = ~0ULL;
		tab_n[i] = 0;
	}
	tab_used = 0;
	last_page = ~0ULL;
	out_rec(CAPTURE_WINDOW_END, end);
}

static VG_REGPARM(1) void count_instrs(HWord n)
{
	instrs += n;
	while (instrs >= window_end) {
		end_window(window_end);
		window_end += (ULong)clo_window;
	}
}

static void add_call(IRSB *sb, const char *name, void *fn, IRExpr *arg, IRExpr *guard)
{
	IRDirty *d = unsafeIRDirty_0_N(1, name, VG_(fnptr_to_fnentry)(fn), mkIRExprVec_1(arg));

	if (guard)
		d->guard = guard;
	addStmtToIRSB(sb, IRStmt_Dirty(d));
}

static void add_access(IRSB *sb, IRExpr *addr, Bool twice, IRExpr *guard)
{
	if (twice)
		add_call(sb, "access2", access2, addr, guard);
	else
		add_call(sb, "access1", access1, addr, guard);
}

/* The instructions begun since the last count, counted before the block can leave. */
static void add_instrs(IRSB *sb, UInt *pending)
{
	if (*pending)
		add_call(sb, "count_instrs", count_instrs, mkIRExpr_HWord(*pending), NULL);
	*pending = 0;
}

static IRSB *instrument(VgCallbackClosure *closure, IRSB *in, const VexGuestLayout *layout,
			const VexGuestExtents *vge, const VexArchInfo *archinfo, IRType gWordTy,
			IRType hWordTy)
{
	IRSB *out = deepCopyIRSBExceptStmts(in);
	UInt pending = 0;
	Int i = 0;

	/* As lackey: the preamble before the first instruction is not the program's. */
	for (; i < in->stmts_used && in->stmts[i]->tag != Ist_IMark; i++)
		addStmtToIRSB(out, in->stmts[i]);
	for (; i < in->stmts_used; i++) {
		IRStmt *st = in->stmts[i];

		switch (st->tag) {
		case Ist_IMark:
			pending++;
			break;
		case Ist_WrTmp:
			if (st->Ist.WrTmp.data->tag == Iex_Load)
				add_access(out, st->Ist.WrTmp.data->Iex.Load.addr, False, NULL);
			break;
		case Ist_Store:
			add_access(out, st->Ist.Store.addr, False, NULL);
			break;
		case Ist_StoreG:
			add_access(out, st->Ist.StoreG.details->addr, False, st->Ist.StoreG.details->guard);
			break;
		case Ist_LoadG:
			add_access(out, st->Ist.LoadG.details->addr, False, st->Ist.LoadG.details->guard);
			break;
		case Ist_Dirty: {
			IRDirty *d = st->Ist.Dirty.details;

			if (d->mFx != Ifx_None)
				add_access(out, d->mAddr, d->mFx == Ifx_Modify, NULL);
			break;
		}
		case Ist_CAS:
			add_access(out, st->Ist.CAS.details->addr, True, NULL);
			break;
		case Ist_LLSC:
			add_access(out, st->Ist.LLSC.addr, False, NULL);
			break;
		case Ist_Exit:
			add_instrs(out, &pending);
			break;
		default:
			break;
		}
		addStmtToIRSB(out, st);
	}
	add_instrs(out, &pending);
	return out;
}

/*
 * valgrind does not follow an exec (without --trace-children, which would
 * start a second tool on the same pipe): the new program runs natively and
 * this tool's fini never comes.  So what ran before goes out now, in case
 * the exec succeeds; cxltier-capture sees no exit record and says why.
 */
static void pre_syscall(ThreadId tid, UInt sysno, UWord *args, UInt nargs)
{
	if (sysno == __NR_execve || sysno == __NR_execveat) {
		end_window(window_end);
		out_rec(CAPTURE_SO_FAR, instrs);
		out_flush();
	}
}

static void post_syscall(ThreadId tid, UInt sysno, UWord *args, UInt nargs, SysRes res)
{
}

static void child_after_fork(ThreadId tid)
{
	/* A forked child is not the program captured: its counts go nowhere. */
	out_fd = -1;
}

static void post_clo_init(void)
{
	if (clo_fd < 0) {
		VG_(fmsg)("cxltier: --cxlt-fd=N is required (cxltier-capture passes it)\n");
		VG_(exit)(1);
	}
	out_fd = VG_(safe_fd)((Int)clo_fd);
	window_end = (ULong)clo_window;
	tab_alloc(1 << 12);
	VG_(atfork)(NULL, NULL, child_after_fork);
}

static Bool process_option(const HChar *arg)
{
	if VG_BINT_CLO(arg, "--cxlt-fd", clo_fd, 0, 1 << 20) {}
	else if VG_BINT_CLO(arg, "--cxlt-window", clo_window, 1, 1LL << 40) {}
	else
		return False;
	return True;
}

static void print_usage(void)
{
	VG_(printf)("    --cxlt-fd=N        write page counts to file descriptor N\n"
		    "    --cxlt-window=N    instructions per window [1000000]\n");
}

static void print_debug_usage(void)
{
}

static void fini(Int exitcode)
{
	end_window(window_end);
	out_rec(CAPTURE_EXIT, instrs);
	out_flush();
}

static void pre_clo_init(void)
{
	VG_(details_name)("cxltier");
	VG_(details_version)(NULL);
	VG_(details_description)("page access counts for cxltier-capture");
	VG_(details_copyright_author)("cxltier maintainers");
	VG_(details_bug_reports_to)("the cxltier issue tracker");
	VG_(details_avg_translation_sizeB)(200);
	VG_(basic_tool_funcs)(post_clo_init, instrument, fini);
	VG_(needs_command_line_options)(process_option, print_usage, print_debug_usage);
	VG_(needs_syscall_wrapper)(pre_syscall, post_syscall);
}

VG_DETERMINE_INTERFACE_VERSION(pre_clo_init)
