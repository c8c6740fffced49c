/* insn_count_plugin.c - a QEMU TCG plugin that counts every guest instruction a VM executes.
 *
 *   qemu-system-x86_64 ... -plugin PATH/libntprof_insn_count.so,count=FILE[,interval_ms=10]
 *                                  [,profile=FILE]
 *
 * count=FILE        the running total, one decimal line, rewritten every interval_ms (write to
 *                   FILE.tmp, then rename: a reader never sees half a number)
 * profile=FILE      also keep one counter per translated block's start address; when FILE.req
 *                   appears, write "TOTAL\n" then "VADDR_HEX INSNS\n" lines to FILE (same
 *                   tmp+rename) and remove FILE.req: the caller creates FILE.req and waits for it
 *                   to vanish. Addresses are guest virtual: kernel ones name functions, BPF
 *                   programs and trampolines (the guest's /proc/kallsyms); user-space ones are
 *                   summed in one counter, they repeat across processes.
 *
 * Each block gets an inline 64-bit add of its instruction count, executed when the block starts:
 * no callback per block, so the count costs the VM little. A block that faults part-way is
 * counted whole, which happens the same way with and without agents.
 *
 * Debian 12's qemu 7.2 is built with plugin support but ships no qemu-plugin.h, so the few
 * declarations used are written here, as qemu 7.2's include/qemu/qemu-plugin.h has them (plugin
 * API version 1). qemu refuses a plugin whose qemu_plugin_version it does not support.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- qemu 7.2's plugin API, version 1 (the part used) ----------------------------------- */
#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))
typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t; /* not read here */
struct qemu_plugin_tb;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
                                              void *ptr, uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
void qemu_plugin_outs(const char *string);

QEMU_PLUGIN_EXPORT int qemu_plugin_version = 1;
QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
                                           char **argv);

/* ---- state --------------------------------------------------------------------------------- */
static uint64_t total; /* every instruction; inline adds from the vCPU thread(s) */
static const char *count_path, *profile_path;
static unsigned interval_ms = 10;

/* The per-block counters. A registered inline add holds the counter's address for as long as
 * the block stays translated, so counters never move: they live in fixed chunks, and the hash
 * index (which does move when it grows) holds pointers to them. */
struct block_counter {
    uint64_t vaddr;
    uint64_t insns;
};
enum { CHUNK = 65536 };
static struct block_counter **chunks;
static size_t n_chunks, n_counters;
static struct block_counter **index_slots; /* open addressing, power-of-two size */
static size_t index_size;
static uint64_t user_insns;                /* every user-space block (addresses repeat per process) */
static pthread_mutex_t profile_lock = PTHREAD_MUTEX_INITIALIZER;

static bool is_kernel_address(uint64_t vaddr) { return vaddr >> 63; }

static size_t slot_of(uint64_t vaddr, size_t size)
{
    return (size_t)((vaddr * 0x9E3779B97F4A7C15ull) >> 20) & (size - 1);
}

static void index_grow(void)
{
    size_t size = index_size ? index_size * 2 : 1 << 16;
    struct block_counter **slots = calloc(size, sizeof *slots);
    if (!slots) {
        qemu_plugin_outs("ntprof insn_count: out of memory for the block index\n");
        abort();
    }
    for (size_t i = 0; i < index_size; i++) {
        struct block_counter *c = index_slots[i];
        if (!c)
            continue;
        size_t s = slot_of(c->vaddr, size);
        while (slots[s])
            s = (s + 1) & (size - 1);
        slots[s] = c;
    }
    free(index_slots);
    index_slots = slots;
    index_size = size;
}

/* The counter of the block starting at vaddr, made on first sight. Called with profile_lock. */
static struct block_counter *block_counter(uint64_t vaddr)
{
    if ((n_counters + 1) * 2 > index_size)
        index_grow();
    size_t s = slot_of(vaddr, index_size);
    while (index_slots[s]) {
        if (index_slots[s]->vaddr == vaddr)
            return index_slots[s];
        s = (s + 1) & (index_size - 1);
    }
    if (n_counters == n_chunks * CHUNK) {
        struct block_counter **more = realloc(chunks, (n_chunks + 1) * sizeof *chunks);
        struct block_counter *chunk = calloc(CHUNK, sizeof *chunk);
        if (!more || !chunk) {
            qemu_plugin_outs("ntprof insn_count: out of memory for block counters\n");
            abort();
        }
        chunks = more;
        chunks[n_chunks++] = chunk;
    }
    struct block_counter *c = &chunks[n_counters / CHUNK][n_counters % CHUNK];
    n_counters++;
    c->vaddr = vaddr;
    index_slots[s] = c;
    return c;
}

static void start_writer(void);

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    start_writer();
    uint64_t n = qemu_plugin_tb_n_insns(tb);
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &total, n);
    if (!profile_path)
        return;
    uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
    uint64_t *where = &user_insns;
    if (is_kernel_address(vaddr)) {
        pthread_mutex_lock(&profile_lock);
        where = &block_counter(vaddr)->insns;
        pthread_mutex_unlock(&profile_lock);
    }
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, where, n);
}

/* ---- output -------------------------------------------------------------------------------- */
/* Writes path.tmp with write_body, then renames it over path. */
static void replace_file(const char *path, void (*write_body)(FILE *))
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return; /* the directory went away (bed torn down): nothing to report to */
    write_body(f);
    if (fclose(f) == 0)
        rename(tmp, path);
}

/* Aligned 64-bit loads are single moves on x86-64: the writer thread reads whole values. */
static uint64_t read_counter(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }

static void write_count(FILE *f) { fprintf(f, "%" PRIu64 "\n", read_counter(&total)); }

static void write_profile(FILE *f)
{
    fprintf(f, "%" PRIu64 "\n", read_counter(&total));
    fprintf(f, "user %" PRIu64 "\n", read_counter(&user_insns));
    pthread_mutex_lock(&profile_lock);
    for (size_t i = 0; i < n_counters; i++) {
        const struct block_counter *c = &chunks[i / CHUNK][i % CHUNK];
        uint64_t n = read_counter(&c->insns);
        if (n)
            fprintf(f, "%" PRIx64 " %" PRIu64 "\n", c->vaddr, n);
    }
    pthread_mutex_unlock(&profile_lock);
}

static void profile_if_asked(void)
{
    char req[4096];
    snprintf(req, sizeof req, "%s.req", profile_path);
    if (access(req, F_OK) != 0)
        return;
    replace_file(profile_path, write_profile);
    unlink(req);
}

static void *writer(void *arg)
{
    (void)arg;
    struct timespec pause = {.tv_sec = interval_ms / 1000, .tv_nsec = (interval_ms % 1000) * 1000000L};
    for (;;) {
        replace_file(count_path, write_count);
        if (profile_path)
            profile_if_asked();
        nanosleep(&pause, NULL);
    }
    return NULL;
}

/* Started with the first translation, not at install: qemu -daemonize forks after loading
 * plugins, and a thread started before the fork would not exist in the daemon. */
static pthread_once_t writer_once = PTHREAD_ONCE_INIT;

static void create_writer(void)
{
    pthread_t t;
    int err = pthread_create(&t, NULL, writer, NULL);
    if (err) {
        fprintf(stderr, "ntprof insn_count: no writer thread: %s\n", strerror(err));
        abort();
    }
    pthread_detach(t);
}

static void start_writer(void) { pthread_once(&writer_once, create_writer); }

static void at_exit(qemu_plugin_id_t id, void *userdata)
{
    (void)id;
    (void)userdata;
    replace_file(count_path, write_count);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
                                           char **argv)
{
    (void)info;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "count=", 6) == 0) {
            count_path = a + 6;
        } else if (strncmp(a, "profile=", 8) == 0) {
            profile_path = a + 8;
        } else if (strncmp(a, "interval_ms=", 12) == 0) {
            interval_ms = (unsigned)strtoul(a + 12, NULL, 10);
        } else {
            fprintf(stderr, "ntprof insn_count: unknown argument '%s' (count=FILE, "
                            "interval_ms=N, profile=FILE)\n", a);
            return 1;
        }
    }
    if (!count_path || !*count_path) {
        fprintf(stderr, "ntprof insn_count: needs count=FILE (where the running total goes)\n");
        return 1;
    }
    if (interval_ms == 0 || interval_ms > 60000) {
        fprintf(stderr, "ntprof insn_count: interval_ms must be 1..60000\n");
        return 1;
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
