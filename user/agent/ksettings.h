/* SPDX-License-Identifier: MIT */
/*
 * Kernel settings the agent changes while it runs, and restores when it
 * stops: NUMA balancing in normal+tiering mode (3) with the kernel's own
 * promotion rate limit at 0.  The kernel's scanner then keeps producing NUMA
 * hint faults on both tiers — the `hint` sampling source — while it promotes
 * nothing itself, so every placement decision is the agent's (measured in
 * docs/design.md, "The machines, measured").
 */
#ifndef CXLT_KSETTINGS_H
#define CXLT_KSETTINGS_H

#include <stdbool.h>
#include <stdint.h>

#define KSET_MAX 6
/*
 * What one NUMA hint fault costs the faulting thread, kernel and BPF: on a
 * 6.18 VM 16,300 faults/s slowed a tierbench thread by 3% (1.8 us each),
 * and the BPF program adds 0.4 us.
 */
#define HINT_FAULT_COST_NS 2000.0
#define HINT_CPU_PCT_DEFAULT 1.0
/* Credit saved while idle, in seconds of budget: one scan pass of a small process. */
#define HINT_BURST_SEC 10.0
/*
 * Cost follows need: after this many epochs in a row with no page moved, the
 * budget halves, down to HINT_NEED_MIN of it; a move brings it back whole.
 * While the fast tier has room to spare, nothing has to leave it, so its
 * pages need no watching: the gate closes at once, a pass under way or not
 * (mode 3 marks every process's pages on the machine, the agent's targets
 * or not: redis under redis-benchmark faulted twice as often as in mode 2).
 */
#define HINT_QUIET_EPOCHS 5
#define HINT_NEED_MIN (1.0 / 32)
/*
 * Starved: hot pages wait on the slow tier while the fast tier's pages went
 * unseen (mode 2 does not mark them), so no policy can tell which of them
 * could make room.  The gate wakes for a pass, whatever the debt up to a
 * burst's worth, at most once in HINT_WAKE_GAP epochs; a wake after which
 * nothing moved doubles the gap, up to HINT_WAKE_GAP_MAX.
 */
#define HINT_WAKE_GAP 4
#define HINT_WAKE_GAP_MAX 64
/* Longest the gate waits in debt for the targets' passes (a target that never runs). */
#define HINT_PASS_WAIT_SEC 60.0
/*
 * The hint source's CPU budget.  The scanner's own pacing knobs live in
 * debugfs, which kernel lockdown closes on many servers, so the agent meters
 * the faults it causes instead: each epoch it credits budget x time, debits
 * the hint faults the kernel counted (/proc/vmstat numa_hint_faults: the
 * scanner marks every process, so every process's), and keeps the normal
 * bit of the mode on (3: fast-tier pages are marked too) while there is
 * credit.  Once open, it closes only after every target's scanner has made
 * a whole pass through it, so that each opening marks every fast-tier page
 * once: a pass is what the cost buys, and what tells a policy that a page
 * went unused (user/sources/marks.h).  The debt is paid with closed time, so the
 * budget holds on average.  Mode 2 marks only slow-tier pages, whose faults
 * keep coming; the kernel promotes nothing in either (rate limit 0).
 */
struct hint_gate {
	bool on;		/* the hint source runs: metering */
	bool open;		/* mode 3 now, else 2 */
	double budget;		/* faults per second the share allows */
	double need;		/* of it, what placement's changes call for now: 1 .. HINT_NEED_MIN */
	uint32_t quiet;		/* epochs in a row with no page moved */
	bool roomy;		/* the fast tier has room to spare: closed, whatever the credit */
	bool wake;		/* room just ran short, or starved: open for a pass, whatever the debt */
	uint64_t epochs;	/* ksettings__need calls: epochs */
	uint64_t woke;		/* the epoch of the last starved wake; 0: none */
	uint32_t wake_gap;	/* epochs between the last two starved wakes, at least */
	bool moved_since_wake;
	uint64_t starved_wakes;
	double credit;		/* faults still allowed; negative: debt */
	uint64_t faults;	/* numa_hint_faults at the last look */
	double at;		/* when (monotonic seconds) */
	double opened_at;	/* when the gate last opened */
	uint64_t opened_epoch;
	double rate;		/* faults per second over the last look */
	uint64_t looks, open_looks, flips;
};

struct ksetting {
	const char *path;
	char old[64];
	bool changed;
};

struct ksettings {
	const char *root;	/* prefix for tests; "" for the real /proc */
	char state[512];	/* where the old values are kept until restored */
	struct ksetting set[KSET_MAX];
	int nr;
	struct hint_gate gate;
};

/* True when this kernel has NUMA balancing to sample with. */
bool ksettings__hint_capable(const char *root);
/*
 * Applies the hint-sampling settings, remembering the old values in memory
 * and in the state file (written before any change, so that an agent killed
 * with SIGKILL leaves enough behind for the next start to restore); -errno.
 * scan_period_ms caps the scanner's period: the sampling-rate knob.  When the
 * kernel's tiering mode is already on and the state file does not say we
 * turned it on, another tool is using it: -EBUSY unless take_over.
 */
int ksettings__take(struct ksettings *k, const char *root, const char *state_path,
		    unsigned int scan_period_ms, bool take_over);
/*
 * Starts metering hint faults against cpu_pct of one core (0: the default),
 * at monotonic time now, open unless the fast tier has room to spare;
 * -errno when this kernel does not count them.
 */
int ksettings__meter_start(struct ksettings *k, double cpu_pct, double now, bool fast_roomy);
/*
 * The agent's epochs with the hint source follow the scanner's passes: one
 * is due once every target's scanner has made a pass since the last epoch
 * (mm->numa_scan_seq moved: `passed`) and the faults that answer the pass
 * taper off (a look brings under 1/32 of the targets' samples since the
 * wait began; at least PASS_WAIT_ANSWER_SEC after the pass).  On a clock of
 * its own an epoch could come up to a period after the pass, and the
 * scanner's next pass would fault on the same hot pages before any of them
 * moved.  The caller zeroes *w, then looks every PASS_WAIT_LOOK_SEC with
 * the targets' sample count (`kept`) until due or a period is over.
 */
#define PASS_WAIT_LOOK_SEC 0.05
#define PASS_WAIT_ANSWER_SEC 0.1
struct pass_wait {
	bool looked;
	double passed_at;	/* when every pass was seen; 0: not yet */
	uint64_t kept0, kept;	/* samples as the wait began, at the last look */
};
bool pass_wait__due(struct pass_wait *w, uint64_t kept, bool passed, double now);

/*
 * Once an epoch (number `epoch`, at time now): settles the credit and opens
 * or closes the gate.  passes_seen: every target's scanner has made a pass
 * that marked fast-tier pages since the gate opened (or there is none).
 */
void ksettings__meter(struct ksettings *k, double now, uint64_t epoch, bool passes_seen);
/*
 * Once an epoch, after the moves: whether any page moved, whether free
 * fast memory is well over the high watermark, and whether hot pages wait
 * on the slow tier while the fast tier's went unseen (starved, above).
 * Quiet epochs shrink the budget (the fast tier is marked less once
 * placement has settled), a move restores it; a roomy fast tier needs the
 * floor only.
 */
void ksettings__need(struct ksettings *k, bool moved, bool fast_roomy, bool starved);
/*
 * At start, with the agent's lock held: puts back the settings recorded in a
 * state file left by an agent that did not stop cleanly.  Returns how many
 * were restored (0 when there was no state file), or -errno.
 */
int ksettings__recover(const char *root, const char *state_path);
/* Puts back every value changed; safe to call twice. */
void ksettings__restore(struct ksettings *k);

#endif
