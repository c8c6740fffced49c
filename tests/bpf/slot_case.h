/* One operation on the BPF in-flight slot table and what the BPF side answered (tests only). */
#ifndef NTPROF_TESTS_SLOT_CASE_H
#define NTPROF_TESTS_SLOT_CASE_H

enum slot_op {
	SLOT_PUT = 1,    /* ntprof_inflight_put(key) with a record whose slba is marker */
	SLOT_FIND = 2,   /* ntprof_inflight_find(key): found, and the slba it holds */
	SLOT_FORGET = 3, /* ntprof_inflight_forget(key) */
};

struct slot_case {
	unsigned long long key;
	unsigned long long marker; /* in: the record's slba at SLOT_PUT; out: its slba at SLOT_FIND */
	long long result;          /* out: put's return value, or 1 when find found the key */
	unsigned int op;
	unsigned int pad;
};

#endif
