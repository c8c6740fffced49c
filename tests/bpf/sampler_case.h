/* One sampler input and the outputs the BPF side computed for it (tests only). */
#ifndef NTPROF_TESTS_SAMPLER_CASE_H
#define NTPROF_TESTS_SAMPLER_CASE_H

struct sampler_case {
	unsigned long long slba;
	unsigned long long salt;
	unsigned long long threshold; /* ntprof_sampling_switch_for(n).threshold */
	unsigned long long hash;   /* out */
	unsigned int nsid;
	unsigned int nlb;
	unsigned int n;
	unsigned int sampled;      /* out */
	unsigned short cid;
	unsigned char opcode;
	unsigned char pad[5];
};

#endif
