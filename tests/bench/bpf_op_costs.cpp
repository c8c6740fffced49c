// bpf_op_costs - ns per operation of each kind the agent's BPF programs do, on this CPU
// (tests/bench/bpf_op_costs.bpf.c): each program does its operation 16 times per run; it is run
// with BPF_PROG_TEST_RUN (--repeat runs, 5 times, median) and the empty program's time is taken
// off. Run it on a real CPU and in a test-bed VM to see which operations emulation makes dear.
//
//   bpf_op_costs [--repeat N] [--json]
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bpf_op_costs.skel.h"

namespace {

constexpr int kOpsPerRun = 16;  // OPS in bpf_op_costs.bpf.c
constexpr int kTrials = 5;

// Median ns per run of prog over kTrials test runs of `repeat` runs each; -1 on error.
double NsPerRun(bpf_program *prog, int repeat, ring_buffer *drain) {
  unsigned char packet[64] = {};
  std::vector<double> trials;
  for (int t = 0; t < kTrials; t++) {
    LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = packet, .data_size_in = sizeof(packet),
                .repeat = repeat);
    if (bpf_prog_test_run_opts(bpf_program__fd(prog), &opts)) return -1;
    trials.push_back(opts.duration);
    if (drain) ring_buffer__consume(drain);
  }
  std::sort(trials.begin(), trials.end());
  return trials[kTrials / 2];
}

int Discard(void *, void *, size_t) { return 0; }

}  // namespace

int main(int argc, char **argv) {
  int repeat = 2000;
  bool json = false;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--repeat" && i + 1 < argc) {
      repeat = std::atoi(argv[++i]);
    } else if (a == "--json") {
      json = true;
    } else {
      std::fprintf(stderr, "usage: bpf_op_costs [--repeat N] [--json]\n");
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  bpf_op_costs *skel = bpf_op_costs__open_and_load();
  if (!skel) {
    std::fprintf(stderr, "bpf_op_costs: cannot load the BPF object: %s\n", std::strerror(errno));
    return 1;
  }
  ring_buffer *drain = ring_buffer__new(bpf_map__fd(skel->maps.ring), Discard, nullptr, nullptr);
  // the ring holds 4 MiB: keep each trial of the ring program below it
  const int ring_repeat = std::min(repeat, (1 << 22) / (kOpsPerRun * 256));
  double empty = NsPerRun(skel->progs.empty, repeat, nullptr);
  if (empty < 0) {
    std::fprintf(stderr, "bpf_op_costs: test run failed: %s\n", std::strerror(errno));
    return 1;
  }
  if (json)
    std::printf("{\"empty_run_ns\": %.1f", empty);
  else
    std::printf("%-20s %10s\n%-20s %10.1f  (a whole run of the empty program)\n", "operation",
                "ns/op", "empty", empty);
  bpf_program *prog;
  bpf_object__for_each_program(prog, skel->obj) {
    std::string name = bpf_program__name(prog);
    if (name == "empty") continue;
    bool ring = name == "ringbuf_output";
    double ns = NsPerRun(prog, ring ? ring_repeat : repeat, ring ? drain : nullptr);
    double per_op = ns < 0 ? -1 : (ns - empty) / kOpsPerRun;
    if (json)
      std::printf(", \"%s\": %.1f", name.c_str(), per_op);
    else
      std::printf("%-20s %10.1f\n", name.c_str(), per_op);
  }
  if (json) std::printf("}\n");
  ring_buffer__free(drain);
  bpf_op_costs__destroy(skel);
  return 0;
}
