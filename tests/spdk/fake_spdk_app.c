// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fake_spdk_app.c - a SIMULATED user-space NVMe-oF target and host that follow the ntprof probe
 * contract exactly as docs/spdk.md asks SPDK to. It is not SPDK: there is no NVMe-oF on the wire.
 * A "host" process sends 64-byte command messages over a unix socket to a "target" process, which
 * runs them through the request pipeline of SPDK's transports with known, injected durations:
 *
 *   host:   H1 submit --host-submit-us--> H2 capsule sent ==wire==> T0 capsule received
 *   target: T0 --recv-us--> T1 --submit-us--> T2 bdev submit --storage-us (sleep)--> T3 bdev done
 *           --respond-us--> T4 response queued --send-us--> T5 reply sent ==wire==> H3
 *   host:   H3 reply received --host-complete-us--> H4 completed
 *
 * "wire" is a one-way delay (--wire-us) that the receiver waits out from the sender's send time
 * (both processes share CLOCK_MONOTONIC), so the network stage is 2 * wire plus the unix socket.
 * Stamps use the TSC, like spdk_get_ticks(), with its rate calibrated at start: the agent has to
 * convert them. The app keeps a log of every command (--log) with the sampling decision it took,
 * so a test can check the agent received exactly the sampled ones.
 *
 * Usage:
 *   fake_spdk_app target --socket PATH [--transport tcp|rdma] [--nqn NQN] [durations] [--log F]
 *   fake_spdk_app host --socket PATH --count N [--transport tcp|rdma] [--wait-rate] [--log F]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ntprof_probe.h"

/* ---- clocks ---- */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The application's stamp clock, like spdk_get_ticks(): the TSC on x86, else a 10 MHz clock. */
static uint64_t ticks(void)
{
#if defined(__x86_64__)
	return __builtin_ia32_rdtsc();
#else
	return mono_ns() / 100;
#endif
}

static uint64_t calibrate_ticks_hz(void)
{
#if defined(__x86_64__)
	uint64_t m0 = mono_ns(), t0 = ticks();
	struct timespec pause = {0, 100 * 1000 * 1000};

	nanosleep(&pause, NULL);
	uint64_t m1 = mono_ns(), t1 = ticks();
	return (uint64_t)((double)(t1 - t0) * 1e9 / (double)(m1 - m0));
#else
	return 10 * 1000 * 1000;
#endif
}

/* Waits until CLOCK_MONOTONIC reaches deadline_ns: sleeps most of it, spins the rest for precision. */
static void wait_until(uint64_t deadline_ns)
{
	const uint64_t spin_ns = 150 * 1000;
	uint64_t now = mono_ns();

	if (deadline_ns > now + spin_ns) {
		uint64_t wake = deadline_ns - spin_ns;
		struct timespec ts = {(time_t)(wake / 1000000000ull), (long)(wake % 1000000000ull)};

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
		}
	}
	while (mono_ns() < deadline_ns) {
	}
}

static void spend_us(uint32_t us) { wait_until(mono_ns() + (uint64_t)us * 1000); }

/* ---- the simulated fabric ---- */

struct connect_msg {
	char subnqn[224];
	uint16_t qid;
};

struct command_msg {
	uint64_t slba;
	uint64_t sent_ns; /* sender's CLOCK_MONOTONIC when handed to the "wire" */
	uint32_t nsid;
	uint32_t nlb;
	uint32_t bytes;
	uint16_t cid;
	uint16_t cntlid;  /* in replies: the cntlid the target assigned at connect */
	uint16_t status;
	uint8_t opcode;
	uint8_t pad[21];
};

static int read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n == 0)
			return 0;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		got += (size_t)n;
	}
	return 1;
}

static int write_full(int fd, const void *buf, size_t len)
{
	return write(fd, buf, len) == (ssize_t)len ? 0 : -1;
}

/* ---- options ---- */

struct options {
	const char *role;
	const char *socket_path;
	const char *transport;
	const char *nqn;
	const char *log_path;
	long count;
	int wait_rate;
	uint32_t wire_us, recv_us, submit_us, storage_us, respond_us, send_us;
	uint32_t host_submit_us, host_complete_us;
};

static void usage(void)
{
	fprintf(stderr,
		"usage: fake_spdk_app target|host --socket PATH [--transport tcp|rdma] [--nqn NQN]\n"
		"         [--count N] [--wait-rate] [--log FILE] [--wire-us U] [--recv-us U]\n"
		"         [--submit-us U] [--storage-us U] [--respond-us U] [--send-us U]\n"
		"         [--host-submit-us U] [--host-complete-us U]\n");
	exit(2);
}

static void parse(int argc, char **argv, struct options *o)
{
	if (argc < 2)
		usage();
	o->role = argv[1];
	for (int i = 2; i < argc; ++i) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--wait-rate")) {
			o->wait_rate = 1;
			continue;
		}
		if (!v)
			usage();
		++i;
		if (!strcmp(a, "--socket")) o->socket_path = v;
		else if (!strcmp(a, "--transport")) o->transport = v;
		else if (!strcmp(a, "--nqn")) o->nqn = v;
		else if (!strcmp(a, "--log")) o->log_path = v;
		else if (!strcmp(a, "--count")) o->count = atol(v);
		else if (!strcmp(a, "--wire-us")) o->wire_us = (uint32_t)atol(v);
		else if (!strcmp(a, "--recv-us")) o->recv_us = (uint32_t)atol(v);
		else if (!strcmp(a, "--submit-us")) o->submit_us = (uint32_t)atol(v);
		else if (!strcmp(a, "--storage-us")) o->storage_us = (uint32_t)atol(v);
		else if (!strcmp(a, "--respond-us")) o->respond_us = (uint32_t)atol(v);
		else if (!strcmp(a, "--send-us")) o->send_us = (uint32_t)atol(v);
		else if (!strcmp(a, "--host-submit-us")) o->host_submit_us = (uint32_t)atol(v);
		else if (!strcmp(a, "--host-complete-us")) o->host_complete_us = (uint32_t)atol(v);
		else usage();
	}
	if (!o->socket_path)
		usage();
}

static int is_rdma(const struct options *o) { return !strcmp(o->transport, "rdma"); }

/* One line per command: what the application decided, for the test to check against the agent. */
static void log_command(FILE *log, const char *role, const struct command_msg *c, uint16_t qid,
			int sampled)
{
	if (!log)
		return;
	fprintf(log, "%s qid=%u cid=%u opc=%u nsid=%u slba=%llu nlb=%u rate=%u salt=%llu sampled=%d\n",
		role, qid, c->cid, c->opcode, c->nsid, (unsigned long long)c->slba, c->nlb,
		ntprof_probe_control.sample_rate, (unsigned long long)ntprof_probe_control.salt, sampled);
	fflush(log);
}

/* ---- target: one controller per connection, one request object reused, like a qpair ---- */

struct target_request {
	struct ntprof_probe_req ntprof; /* the stamp area SPDK would embed in spdk_nvmf_request */
	struct command_msg cmd;
};

static int serve_connection(int fd, uint16_t cntlid, const struct options *o, FILE *log)
{
	struct connect_msg conn;
	struct command_msg reply = {0};
	struct target_request req;

	if (read_full(fd, &conn, sizeof(conn)) != 1)
		return -1;
	conn.subnqn[sizeof(conn.subnqn) - 1] = 0;
	reply.cntlid = cntlid;
	if (write_full(fd, &reply, sizeof(reply)))
		return -1;

	while (read_full(fd, &req.cmd, sizeof(req.cmd)) == 1) {
		struct command_msg *c = &req.cmd;

		wait_until(c->sent_ns + (uint64_t)o->wire_us * 1000); /* the capsule crosses the wire */
		uint64_t t0 = ticks();
		int sampled = ntprof_probe_begin(&req.ntprof, c->opcode, c->nsid, c->slba, c->nlb, c->cid);

		log_command(log, "target", c, conn.qid, sampled);
		ntprof_probe_stamp(&req.ntprof, NTPROF_PROBE_T0_CAPSULE_RECEIVED, t0);
		spend_us(o->recv_us);
		ntprof_probe_stamp(&req.ntprof, NTPROF_PROBE_T1_REQUEST_STARTED, ticks());
		spend_us(o->submit_us);
		ntprof_probe_stamp(&req.ntprof, NTPROF_PROBE_T2_BDEV_SUBMIT, ticks());
		struct timespec io = {0, (long)o->storage_us * 1000}; /* the "drive" */
		nanosleep(&io, NULL);
		ntprof_probe_stamp(&req.ntprof, NTPROF_PROBE_T3_BDEV_DONE, ticks());
		spend_us(o->respond_us);
		ntprof_probe_stamp(&req.ntprof, NTPROF_PROBE_T4_RESPONSE_QUEUED, ticks());
		spend_us(o->send_us);
		ntprof_probe_stamp(&req.ntprof, NTPROF_PROBE_T5_REPLY_SENT, ticks());

		reply = *c;
		reply.cntlid = cntlid;
		reply.status = 0;
		reply.sent_ns = mono_ns();
		if (write_full(fd, &reply, sizeof(reply)))
			return -1;
		if (is_rdma(o)) {
			NTPROF_PROBE_NVMF_RDMA_DONE(&req.ntprof, ticks(), conn.subnqn, cntlid, conn.qid,
						    c->cid, c->opcode, c->nsid, c->slba, c->nlb,
						    c->bytes, reply.status);
		} else {
			NTPROF_PROBE_NVMF_TCP_DONE(&req.ntprof, ticks(), conn.subnqn, cntlid, conn.qid,
						   c->cid, c->opcode, c->nsid, c->slba, c->nlb, c->bytes,
						   reply.status);
		}
	}
	return 0;
}

static int run_target(const struct options *o, FILE *log)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int lfd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", o->socket_path);
	unlink(o->socket_path);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) || listen(lfd, 4)) {
		fprintf(stderr, "fake_spdk_app target: cannot listen on %s: %s\n", o->socket_path,
			strerror(errno));
		return 1;
	}
	printf("listening %s\n", o->socket_path);
	fflush(stdout);
	for (uint16_t cntlid = 1;; ++cntlid) {
		int fd = accept(lfd, NULL, NULL);

		if (fd < 0)
			continue;
		serve_connection(fd, cntlid, o, log);
		close(fd);
	}
	return 0;
}

/* ---- host: QD1 over one I/O queue; cids cycle through a small pool like a driver's tags ---- */

struct host_request {
	struct ntprof_probe_req ntprof; /* the stamp area SPDK would embed in nvme_tcp_req */
	struct command_msg cmd;
};

static int run_host(const struct options *o, FILE *log)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct connect_msg conn = {.qid = 1};
	struct command_msg reply;
	struct host_request req;
	const uint16_t qid = 1;

	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", o->socket_path);
	snprintf(conn.subnqn, sizeof(conn.subnqn), "%s", o->nqn);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		fprintf(stderr, "fake_spdk_app host: cannot connect to %s: %s\n", o->socket_path,
			strerror(errno));
		return 1;
	}
	if (write_full(fd, &conn, sizeof(conn)) || read_full(fd, &reply, sizeof(reply)) != 1)
		return 1;
	const uint16_t cntlid = reply.cntlid;

	if (o->wait_rate) { /* start once an agent has switched sampling on */
		while (ntprof_probe_control.sample_rate == 0)
			usleep(10 * 1000);
	}
	srand(42);
	for (long i = 0; i < o->count; ++i) {
		struct command_msg *c = &req.cmd;

		memset(c, 0, sizeof(*c));
		c->opcode = (i % 2) ? 0x01 /* write */ : 0x02 /* read */;
		c->nsid = 1;
		c->slba = (uint64_t)(rand() % 262144) * 8;
		c->nlb = 7; /* 0-based: 8 blocks of 512 B */
		c->bytes = 4096;
		c->cid = (uint16_t)(i % 64);
		int sampled = ntprof_probe_begin(&req.ntprof, c->opcode, c->nsid, c->slba, c->nlb, c->cid);

		log_command(log, "host", c, qid, sampled);
		ntprof_probe_stamp(&req.ntprof, NTPROF_PROBE_H1_SUBMIT, ticks());
		spend_us(o->host_submit_us);
		ntprof_probe_stamp(&req.ntprof, NTPROF_PROBE_H2_CAPSULE_SENT, ticks());
		c->sent_ns = mono_ns();
		if (write_full(fd, c, sizeof(*c)) || read_full(fd, &reply, sizeof(reply)) != 1) {
			fprintf(stderr, "fake_spdk_app host: target closed the connection\n");
			return 1;
		}
		wait_until(reply.sent_ns + (uint64_t)o->wire_us * 1000); /* the reply crosses the wire */
		ntprof_probe_stamp(&req.ntprof, NTPROF_PROBE_H3_REPLY_RECEIVED, ticks());
		spend_us(o->host_complete_us);
		ntprof_probe_stamp(&req.ntprof, NTPROF_PROBE_H4_COMPLETED, ticks());
		if (is_rdma(o)) {
			NTPROF_PROBE_NVME_RDMA_DONE(&req.ntprof, ticks(), conn.subnqn, cntlid, qid, c->cid,
						    c->opcode, c->nsid, c->slba, c->nlb, c->bytes,
						    reply.status);
		} else {
			NTPROF_PROBE_NVME_TCP_DONE(&req.ntprof, ticks(), conn.subnqn, cntlid, qid, c->cid,
						   c->opcode, c->nsid, c->slba, c->nlb, c->bytes,
						   reply.status);
		}
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct options o = {
		.transport = "tcp", .nqn = "nqn.2016-06.io.spdk:fake", .count = 100,
		.wire_us = 1500, .recv_us = 300, .submit_us = 700, .storage_us = 5000,
		.respond_us = 500, .send_us = 500, .host_submit_us = 600, .host_complete_us = 400,
	};
	FILE *log = NULL;

	parse(argc, argv, &o);
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0); /* sleeps end on time: durations are the test's truth */
	ntprof_probe_init(calibrate_ticks_hz());
	if (o.log_path && !(log = fopen(o.log_path, "w"))) {
		fprintf(stderr, "fake_spdk_app: cannot write %s: %s\n", o.log_path, strerror(errno));
		return 1;
	}
	if (!strcmp(o.role, "target"))
		return run_target(&o, log);
	if (!strcmp(o.role, "host"))
		return run_host(&o, log);
	usage();
	return 2;
}
