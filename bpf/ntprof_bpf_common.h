/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ntprof_bpf_common.h - what every ntprof BPF object shares: the session's read-only config, the
 * ring buffer of records, loss counters, the watched-device table and small kernel helpers.
 *
 * Include once per object, first. One handler body serves the BTF-typed variants of a hook (tp_btf,
 * fentry, fexit) and the untyped ones (raw_tp, kprobe): hot paths read kernel memory through
 * NTPROF_READ, which loads directly in the typed ones and calls bpf_probe_read_kernel in the
 * others.
 */
#ifndef NTPROF_BPF_COMMON_H
#define NTPROF_BPF_COMMON_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "ntprof_maps.h"
#include "ntprof_record.h"
#include "ntprof_sampler.h"
#include "ntprof_kernel_types.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* ---- session config, set by the agent before load (rodata) ---- */
/* ntprof_salt_key() of the fleet's salt (every session on this agent shares it): the hash's salt
 * round, done once here rather than per command */
const volatile __u64 salt_key = 0;

/* ---- maps shared by every object ---- */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NTPROF_LOSS_CAUSES);
	__type(key, __u32);
	__type(value, __u64);
} losses SEC(".maps");

/* Devices (kernel dev_t, MAJOR << 20 | MINOR) whose commands are counted and may be sampled;
 * filled by the agent (host: namespaces of NVMe/TCP controllers, or --device). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NTPROF_MAX_DEVICES);
	__type(key, __u32);
	__type(value, __u8);
} watched_devs SEC(".maps");

/* ---- reading kernel memory: direct loads where the program's arguments are typed ----
 * In a BTF-typed program (tp_btf, fentry, fexit) a pointer argument, and every pointer loaded
 * through it, is typed by the kernel's BTF: the verifier lets the program load its fields directly
 * (the JIT emits a plain load that a fault cannot crash; a bad address reads 0, as a failed probe
 * read does). Untyped programs (raw_tp, kprobe) see plain numbers and must call
 * bpf_probe_read_kernel. The call is what costs: in the 6.1 test-bed guests under TCG one probe
 * read added 8 us to a 4 us program, a direct load nothing measurable (docs/lab/overhead-log.md, fifth
 * pass). So a handler on a path every command takes gets `typed`, the constant ntprof_typed its
 * program variant declares (true in the typed one), and reads through NTPROF_READ: after inlining
 * the compiler keeps only the branch that variant can run.
 *
 * Only pointers the program's arguments lead to are typed. A pointer computed from a number (a
 * map value, container_of's negative offset, blk_mq_rq_to_pdu's step past the end of struct
 * request) is a number to the verifier: those reads stay BPF_CORE_READ in every variant. */
#define NTPROF_DEREF_1(src, a) (src)->a
#define NTPROF_DEREF_2(src, a, b) (src)->a->b
#define NTPROF_DEREF_3(src, a, b, c) (src)->a->b->c
#define NTPROF_NARGS_(_1, _2, _3, n, ...) n
#define NTPROF_NARGS(...) NTPROF_NARGS_(__VA_ARGS__, 3, 2, 1)
#define NTPROF_PASTE_(a, b) a##b
#define NTPROF_PASTE(a, b) NTPROF_PASTE_(a, b)
/* src->a->b... : a direct load chain when typed, else BPF_CORE_READ(src, a, b...). */
#define NTPROF_READ(typed, src, ...)                                                   \
	((typed) ? NTPROF_PASTE(NTPROF_DEREF_, NTPROF_NARGS(__VA_ARGS__))(src, __VA_ARGS__) \
		 : BPF_CORE_READ(src, __VA_ARGS__))

/* The attach variants of one hook, calling the same handler; the agent's hook plan loads the one
 * this kernel offers. params is the parenthesised parameter list of the tracepoint or traced
 * function, call the handler call that makes the program's return value; call may pass
 * ntprof_typed (true in tp_btf and fentry, false in raw_tp and kprobe) on to NTPROF_READ:
 *   NTPROF_TRACEPOINT_HOOK(tp, params, subject, call)
 *       -> <tp>_tp (tp_btf) and <tp>_rawtp (raw_tp, no BTF needed). subject is the pointer
 *          argument the event is about: NULL means nothing to do. The check is also what lets
 *          the verifier of 6.12, which types module tracepoint arguments as maybe-NULL, accept
 *          the tp_btf variant (6.1 did without it).
 *   NTPROF_DECIDING_TRACEPOINT_HOOK(tp, params, subject, sqe, call) (below)
 *   NTPROF_STAMPING_ENTRY_HOOK(fn, params, call) (below)
 *       -> <fn>_fentry and <fn>_kprobe (no trampolines) */
#define NTPROF_UNPAREN(...) __VA_ARGS__
/* The raw_tp variant of a tracepoint hook: untyped, the whole handler inline. */
#define NTPROF_RAW_TRACEPOINT_PROG(tp, params, subject, call)                         \
	SEC("raw_tp/" #tp)                                                            \
	int BPF_PROG(tp##_rawtp, NTPROF_UNPAREN params)                               \
	{                                                                             \
		const bool ntprof_typed __attribute__((unused)) = false;              \
		if (!subject)                                                         \
			return 0;                                                     \
		return call;                                                          \
	}
#define NTPROF_TRACEPOINT_HOOK(tp, params, subject, call)                             \
	SEC("tp_btf/" #tp)                                                            \
	int BPF_PROG(tp##_tp, NTPROF_UNPAREN params)                                  \
	{                                                                             \
		const bool ntprof_typed __attribute__((unused)) = true;               \
		if (!subject)                                                         \
			return 0;                                                     \
		return call;                                                          \
	}                                                                             \
	NTPROF_RAW_TRACEPOINT_PROG(tp, params, subject, call)

/* The same for a hook that only finds and stamps commands already sampled (every hook but the
 * two that take the sampling decision):
 *   NTPROF_STAMPING_TRACEPOINT_HOOK(tp, params, subject, call)
 *   NTPROF_STAMPING_ENTRY_HOOK(fn, params, call)
 *   NTPROF_STAMPING_PROG(name, section, typed, params, subject, call)   one program, any section
 * The program returns at once while no sampled command is in flight, and the handler runs in a
 * subprogram of its own (name_stamp, __noinline). Why: the JIT saves and restores the
 * callee-saved registers a program uses at its every entry and exit, early return or not; the
 * early return alone uses none, so it is spared those pushes and pops: about 9 guest instructions
 * in each of the 4-7 runs per I/O a side makes (docs/overhead.md, "The second cut"). The kprobe
 * variants, a fallback, stay as they are. */
#define NTPROF_STAMPING_PROG(name, section, typed, params, subject, call)             \
	static __noinline int BPF_PROG(name##_stamp, NTPROF_UNPAREN params)            \
	{                                                                             \
		const bool ntprof_typed __attribute__((unused)) = typed;              \
		if (!(subject))                                                       \
			return 0;                                                     \
		return call;                                                          \
	}                                                                             \
	SEC(section)                                                                  \
	int name(unsigned long long *ctx)                                             \
	{                                                                             \
		if (!ntprof_nothing_sampled_in_flight())                              \
			name##_stamp(ctx);                                            \
		return 0;                                                             \
	}
#define NTPROF_STAMPING_TRACEPOINT_HOOK(tp, params, subject, call)                    \
	NTPROF_STAMPING_PROG(tp##_tp, "tp_btf/" #tp, true, params, subject, call)     \
	NTPROF_STAMPING_PROG(tp##_rawtp, "raw_tp/" #tp, false, params, subject, call)
#define NTPROF_STAMPING_ENTRY_HOOK(fn, params, call)                                  \
	NTPROF_STAMPING_PROG(fn##_fentry, "fentry/" #fn, true, params, 1, call)       \
	SEC("kprobe/" #fn)                                                            \
	int BPF_KPROBE(fn##_kprobe, NTPROF_UNPAREN params)                            \
	{                                                                             \
		const bool ntprof_typed __attribute__((unused)) = false;              \
		return call;                                                          \
	}

/* ---- how many sampled commands are in flight ----
 * The number of entries in this object's in-flight table. A hook that only finds and stamps a
 * command already sampled returns at once while it is 0, before any probe read or hash lookup: at
 * 1 in 100 that is most of its runs (at QD1, 99 %), which then cost one load. The count never
 * falls short of the table: it rises before an entry is inserted and falls only after a program
 * deleted one. Entries the agent sweeps from user space (commands whose completion never came)
 * leave it above the table, which costs only speed.
 * A global in a data section of its own: the program loads it directly (an array map's lookup was
 * a call and a NULL check on every hook run), the agent reads it through the section's mmap, and
 * its cache line is not the one of the sampling switch every command reads. */
__s64 ntprof_sampled_in_flight SEC(".data.ntprof_in_flight") = 0;

static __always_inline void ntprof_in_flight_add(__s64 n)
{
	__sync_fetch_and_add(&ntprof_sampled_in_flight, n);
}

static __always_inline bool ntprof_nothing_sampled_in_flight(void)
{
	return *(volatile __s64 *)&ntprof_sampled_in_flight <= 0;
}

static __always_inline void ntprof_lose(__u32 cause)
{
	__u64 *n = bpf_map_lookup_elem(&losses, &cause);

	if (n)
		*n += 1; /* per-CPU slot: no atomic needed */
}

/* The agent is woken once every NTPROF_RING_WAKEUP_RECORDS records (about 184 KiB of the 4 MiB
 * ring); between wakeups it drains the ring on its own when its interval ends (daemon/
 * recording_loop.h, at least once a second). A wakeup per record (an irq_work, then the agent's
 * thread on a CPU the I/O needs) was most of what a sampled command cost at its emit. Counting
 * records in a global is an inlined atomic add; asking the ring how much it holds was a kernel
 * call on every sampled command. */
#define NTPROF_RING_WAKEUP_RECORDS 1024
__u64 ntprof_emitted = 0;

/* Hand a finished record to user space. The in-flight entry is copied, so the caller may delete it. */
static __always_inline void ntprof_emit(const struct ntprof_record *rec)
{
	__u64 n = __sync_fetch_and_add(&ntprof_emitted, 1);
	__u64 wake = n % NTPROF_RING_WAKEUP_RECORDS == NTPROF_RING_WAKEUP_RECORDS - 1
			     ? BPF_RB_FORCE_WAKEUP
			     : BPF_RB_NO_WAKEUP;

	if (bpf_ringbuf_output(&events, (void *)rec, sizeof(*rec), wake))
		ntprof_lose(NTPROF_LOSS_RINGBUF_FULL);
}

/* The rate new commands are sampled at, N (one in N), or 0 = none: the agent sets it once every
 * hook is attached and 0 before it detaches any, so no command is sampled while only some of its
 * hooks would see it (at the start a stamp missing; at the stop one left over from an earlier
 * command, such as the last capsule read's time taken as T0). With several sessions on the agent
 * it is the finest of their rates, changed as they come and go (the sets nest, ntprof_sampler.h).
 * Kept as {threshold, rate} (ntprof_sampling_switch_for) so a command's decision is one compare.
 * A global in a data section of its own: the agent writes it through the section's mmap (no
 * bpf() call), the programs load it directly (no map lookup). */
struct ntprof_sampling_switch ntprof_switch SEC(".data.ntprof_switch") = {};

/* The switch's rate: one load (the agent may be changing it: ntprof_sampler.h says why any mix of
 * old and new rate and threshold holds). */
static __always_inline __u32 ntprof_sampling_rate(void)
{
	return *(volatile __u32 *)&ntprof_switch.rate;
}

/* The decision on a command's identity at rate, a value ntprof_sampling_rate() returned. */
static __always_inline bool ntprof_sampled_at(__u32 rate, __u8 opcode, __u32 nsid, __u64 slba,
					      __u32 nlb, __u16 cid)
{
	__u64 threshold = *(volatile __u64 *)&ntprof_switch.threshold;

	return ntprof_switch_sampled(rate, threshold, opcode, nsid, slba, nlb, cid, salt_key);
}

static __always_inline bool ntprof_is_sampled(__u8 opcode, __u32 nsid, __u64 slba, __u32 nlb,
					      __u16 cid)
{
	return ntprof_sampled_at(ntprof_sampling_rate(), opcode, nsid, slba, nlb, cid);
}

/* The block device a request is for: the partition/whole-disk bdev the bio was aimed at. */
/* A whole disk's device number (MAJOR << 20 | MINOR, as the kernel's dev_t). */
static __always_inline __u32 ntprof_disk_dev(struct gendisk *disk, bool typed)
{
	return ((__u32)NTPROF_READ(typed, disk, major) << 20) |
	       (__u32)NTPROF_READ(typed, disk, first_minor);
}

static __always_inline __u32 ntprof_rq_dev(struct request *rq, bool typed)
{
	struct block_device *part = NTPROF_READ(typed, rq, part);

	if (part)
		return NTPROF_READ(typed, part, bd_dev);
	struct gendisk *disk = NTPROF_READ(typed, rq, q, disk);
	return disk ? ntprof_disk_dev(disk, typed) : 0;
}

static __always_inline bool ntprof_dev_watched(__u32 dev)
{
	return bpf_map_lookup_elem(&watched_devs, &dev) != NULL;
}

/* REQ_OP_* of a request (the low 8 bits of cmd_flags on every kernel since 4.10). */
#define NTPROF_REQ_OP_READ 0
#define NTPROF_REQ_OP_WRITE 1
static __always_inline __u32 ntprof_rq_op(struct request *rq, bool typed)
{
	return NTPROF_READ(typed, rq, cmd_flags) & 0xff;
}

/* ---- the NVMe SQE fields both sides sample on ---- */
struct ntprof_sqe {
	__u64 slba;
	__u32 nsid;
	__u32 nlb;
	__u32 data_len;
	__u16 cid;
	__u8 opcode;
	__u8 sgl_type; /* dptr.sgl.type: NTPROF_SGL_INCAPSULE when data came in the capsule */
};

/* The fields of the 64-byte SQE at sqe, loaded directly: sqe must be a typed struct nvme_command
 * pointer (a typed program's argument, or a field loaded through one). The slba is read as its two
 * dwords: the verifier checks each load against one member of the kernel's struct, and the
 * command-specific dwords 10 and 11 are separate members in most of its views. */
static __always_inline int ntprof_load_sqe(const void *sqe, struct ntprof_sqe *out)
{
	const __u8 *b = sqe;

	if (!b) /* 6.12 types module tracepoints' pointer arguments as maybe NULL */
		return -1;
	out->opcode = b[NTPROF_SQE_OPCODE];
	out->cid = *(const __u16 *)(b + NTPROF_SQE_CID);
	out->nsid = *(const __u32 *)(b + NTPROF_SQE_NSID);
	out->data_len = *(const __u32 *)(b + NTPROF_SQE_SGL_LEN);
	out->sgl_type = b[NTPROF_SQE_SGL_TYPE];
	if ((out->sgl_type >> 4) == NTPROF_SGL_KEYED_DATA)
		out->data_len &= 0xffffff; /* keyed SGL (RDMA): 24-bit length, then the key */
	out->slba = *(const __u32 *)(b + NTPROF_SQE_SLBA) |
		    (__u64)*(const __u32 *)(b + NTPROF_SQE_SLBA + 4) << 32;
	out->nlb = *(const __u16 *)(b + NTPROF_SQE_NLB);
	return 0;
}

/* Parse the fields of a 64-byte SQE at kernel address sqe (one probe read of 52 bytes). */
static __always_inline int ntprof_read_sqe(const void *sqe, struct ntprof_sqe *out)
{
	__u8 b[NTPROF_SQE_READ_LEN];

	if (bpf_probe_read_kernel(b, sizeof(b), sqe))
		return -1;
	out->opcode = b[NTPROF_SQE_OPCODE];
	out->cid = *(__u16 *)&b[NTPROF_SQE_CID];
	out->nsid = *(__u32 *)&b[NTPROF_SQE_NSID];
	out->data_len = *(__u32 *)&b[NTPROF_SQE_SGL_LEN];
	out->sgl_type = b[NTPROF_SQE_SGL_TYPE];
	if ((out->sgl_type >> 4) == NTPROF_SGL_KEYED_DATA)
		out->data_len &= 0xffffff; /* keyed SGL (RDMA): 24-bit length, then the key */
	out->slba = *(__u64 *)&b[NTPROF_SQE_SLBA];
	out->nlb = *(__u16 *)&b[NTPROF_SQE_NLB];
	return 0;
}

/* The 16-bit field at p, the cheapest way the program can: a direct load when p is typed (see
 * NTPROF_READ), else a probe read. 0, or -1 when it cannot be read. */
static __always_inline int ntprof_get_u16(bool typed, const void *p, __u16 *out)
{
	if (!typed)
		return bpf_probe_read_kernel(out, sizeof(*out), p) ? -1 : 0;
	if (!p)
		return -1;
	*out = *(const __u16 *)p;
	return 0;
}

/* The SQE at sqe, the cheapest way the program can: typed, or a probe read. */
static __always_inline int ntprof_get_sqe(bool typed, const void *sqe, struct ntprof_sqe *out)
{
	return typed ? ntprof_load_sqe(sqe, out) : ntprof_read_sqe(sqe, out);
}

/* A hook that takes the sampling decision on an SQE (nvme_setup_cmd, nvmet_req_init):
 *   NTPROF_DECIDING_TRACEPOINT_HOOK(tp, params, subject, sqe, call)
 *       -> <tp>_tp (tp_btf) and <tp>_rawtp (raw_tp), as NTPROF_TRACEPOINT_HOOK. The tp_btf program
 *          is only the decision on the typed SQE sqe; call, which takes it again and does the
 *          rest, runs in a subprogram of its own (<tp>_tp_sampled, __noinline) for the one command
 *          in N it keeps. Why: the whole handler inlined kept the decision's fields in stack slots
 *          and made the JIT save and restore callee-saved registers on every command, sampled or
 *          not (docs/overhead.md, "The third cut"). */
/* The sampling decision on the SQE at sqe_addr: true, with its fields in *sqe, for a sampled
 * command that is not a fabrics command. Both sides decide with it. */
static __always_inline bool ntprof_sampled_sqe(const void *sqe_addr, struct ntprof_sqe *sqe,
					       bool typed)
{
	/* the rate first: with none set (every hook attached, nothing sampled) no SQE field is
	 * loaded, and each costs seven instructions through a typed pointer */
	__u32 rate = ntprof_sampling_rate();

	if (!rate)
		return false;
	return !ntprof_get_sqe(typed, sqe_addr, sqe) && sqe->opcode != NTPROF_OPC_FABRICS &&
	       ntprof_sampled_at(rate, sqe->opcode, sqe->nsid, sqe->slba, sqe->nlb, sqe->cid);
}

#define NTPROF_DECIDING_TRACEPOINT_HOOK(tp, params, subject, sqe, call)                \
	static __noinline int BPF_PROG(tp##_tp_sampled, NTPROF_UNPAREN params)         \
	{                                                                             \
		const bool ntprof_typed __attribute__((unused)) = true;               \
		if (!subject) /* checked again: the subprogram reads its arguments anew */ \
			return 0;                                                     \
		return call;                                                          \
	}                                                                             \
	SEC("tp_btf/" #tp)                                                            \
	int BPF_PROG(tp##_tp, NTPROF_UNPAREN params)                                  \
	{                                                                             \
		struct ntprof_sqe ntprof_decided;                                     \
		if (subject && ntprof_sampled_sqe(sqe, &ntprof_decided, true))        \
			tp##_tp_sampled(ctx);                                         \
		return 0;                                                             \
	}                                                                             \
	NTPROF_RAW_TRACEPOINT_PROG(tp, params, subject, call)

static __always_inline bool ntprof_opcode_is_write(__u8 opcode)
{
	return (opcode & 3) == 1; /* NVMe data transfer direction bits: 01 = host to controller */
}

/* ---- page -> kernel virtual address (x86-64 vmemmap + direct map, KASLR aware) ----
 * The NVMe/TCP drivers hand PDU headers to TCP as (page, offset); to read the header we need
 * page_address(page). The two bases are kernel variables; the agent finds their addresses in
 * /proc/kallsyms, which it reads anyway for its hook plan (0 = not found: the no-KASLR bases).
 * They are not __ksym externs: resolving those has libbpf parse all of kallsyms again at every
 * load, seconds of an agent's start under emulation. */
const volatile __u64 vmemmap_base_addr = 0;
const volatile __u64 page_offset_base_addr = 0;
__u64 ntprof_vmemmap_base = 0;
__u64 ntprof_page_offset_base = 0;

/* page is the struct page * as a number: in fentry/fexit programs a pointer argument is a trusted
 * BTF pointer on which the verifier forbids this arithmetic (see ntprof_as_number). */
static __always_inline void *ntprof_page_address(__u64 page)
{
	if (!ntprof_vmemmap_base) {
		__u64 v = 0xffffea0000000000ULL, p = 0xffff888000000000ULL; /* no-KASLR defaults */

		if (vmemmap_base_addr)
			bpf_probe_read_kernel(&v, sizeof(v), (void *)vmemmap_base_addr);
		if (page_offset_base_addr)
			bpf_probe_read_kernel(&p, sizeof(p), (void *)page_offset_base_addr);
		ntprof_page_offset_base = p;
		ntprof_vmemmap_base = v;
	}
	__u64 pfn = (page - ntprof_vmemmap_base) / bpf_core_type_size(struct page);
	return (void *)(ntprof_page_offset_base + (pfn << 12));
}

/* A pointer as a plain number. In BTF-typed programs pointer arguments are trusted BTF pointers on
 * which the verifier allows no arithmetic. Negating a register twice gives the same bits, and the
 * verifier lets a loader that may see kernel addresses (CAP_PERFMON, which tracing needs anyway)
 * negate a pointer, after which the register is a number: two instructions. (The copy through
 * bpf_probe_read_kernel this replaces was a kernel call, about as dear as any probe read under
 * emulation.) For numbers, as in kprobes, it is the identity, so one handler body serves both. */
static __always_inline __u64 ntprof_as_number(const void *p)
{
	__u64 v = (__u64)p;

	asm volatile("%0 = -%0; %0 = -%0" : "+r"(v));
	return v;
}

#endif /* NTPROF_BPF_COMMON_H */
