/* The probe contract compiles as C (SPDK is C) with warnings as errors: nothing but including it. */
#include "ntprof_probe.h"

int ntprof_probe_header_c_check(void);
int ntprof_probe_header_c_check(void)
{
	struct ntprof_probe_req r = {0};

	ntprof_probe_init(1000000000ull);
	if (ntprof_probe_begin(&r, 0x02, 1, 0, 7, 1))
		ntprof_probe_stamp(&r, NTPROF_PROBE_T0_CAPSULE_RECEIVED, 1);
	NTPROF_PROBE_NVMF_TCP_DONE(&r, 2, "nqn", 1, 1, 1, 0x02, 1, 0, 7, 4096, 0);
	return 0;
}
