/* A user-space "target" whose probes live in a shared library (libntprof_probe.so) that the agent
 * cannot find on its own: built without a run path and run with LD_LIBRARY_PATH, as SPDK built with
 * shared libraries is. Fires COUNT commands with KNOWN target stamps (storage 500 us) and prints how
 * many were sampled. SIMULATED target (no NVMe-oF on the wire), real probes.
 *
 * usage: LD_LIBRARY_PATH=DIR library_target_app COUNT */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ntprof_probe_lib.h"

int main(int argc, char **argv)
{
	const int count = argc > 1 ? atoi(argv[1]) : 0;
	const uint64_t us = 1000;
	struct ntprof_probe_req *r = calloc(1, ntprof_lib_req_size());
	int sampled = 0;

	ntprof_lib_init(1000000000ull);
	for (int i = 0; i < 3000 && ntprof_lib_sample_rate() == 0; i++)
		usleep(10000); /* up to 30 s for an agent to attach */
	if (ntprof_lib_sample_rate() == 0) {
		fprintf(stderr, "library_target_app: no agent attached in 30 s\n");
		return 3;
	}
	for (int i = 0; i < count; i++) {
		const uint64_t slba = (uint64_t)i * 8, t0 = ntprof_lib_now();
		const uint16_t cid = (uint16_t)(i % 64);

		sampled += ntprof_lib_begin(r, 0x02, 1, slba, 7, cid);
		ntprof_lib_stamp(r, NTPROF_PROBE_T0_CAPSULE_RECEIVED, t0);
		ntprof_lib_stamp(r, NTPROF_PROBE_T1_REQUEST_STARTED, t0 + 10 * us);
		ntprof_lib_stamp(r, NTPROF_PROBE_T2_BDEV_SUBMIT, t0 + 20 * us);
		ntprof_lib_stamp(r, NTPROF_PROBE_T3_BDEV_DONE, t0 + 520 * us);
		ntprof_lib_stamp(r, NTPROF_PROBE_T4_RESPONSE_QUEUED, t0 + 530 * us);
		ntprof_lib_stamp(r, NTPROF_PROBE_T5_REPLY_SENT, t0 + 540 * us);
		ntprof_lib_done(r, NTPROF_LIB_TARGET_TCP, t0 + 600 * us, "nqn.2024-01.io.ntprof:library-target",
				3, 1, cid, 0x02, 1, slba, 7, 4096, 0);
	}
	printf("%d\n", sampled);
	free(r);
	return 0;
}
