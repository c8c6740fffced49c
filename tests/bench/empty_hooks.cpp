// empty_hooks - attaches programs that do nothing (tests/bench/empty_hooks.bpf.c) at the points
// named on the command line and keeps them attached until SIGINT or SIGTERM. agent_overhead.py
// runs it in a test-bed VM with the names of the programs the agent attached there, to measure
// what any program at those points costs the VM: the floor under the agent's hooks.
//
//   empty_hooks PROGRAM...      e.g. empty_hooks nvme_setup_cmd_tp skb_copy_bits_fexit
//
// Prints "empty_hooks: attached N programs" once all are attached; exits 1 with the reason when a
// name is unknown or a program does not load or attach.
#include <bpf/libbpf.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "empty_hooks.skel.h"

namespace {

volatile sig_atomic_t g_stop = 0;

void OnSignal(int) { g_stop = 1; }

int Usage(const empty_hooks *skel) {
  std::fprintf(stderr, "usage: empty_hooks PROGRAM...\nprograms:");
  bpf_program *prog;
  bpf_object__for_each_program(prog, skel->obj) std::fprintf(stderr, " %s", bpf_program__name(prog));
  std::fprintf(stderr, "\n");
  return 2;
}

}  // namespace

int main(int argc, char **argv) {
  empty_hooks *skel = empty_hooks__open();
  if (!skel) {
    std::fprintf(stderr, "empty_hooks: cannot open the BPF object: %s\n", std::strerror(errno));
    return 1;
  }
  std::set<std::string> wanted(argv + 1, argv + argc);
  if (wanted.empty() || wanted.count("--help") || wanted.count("-h")) return Usage(skel);
  bpf_program *prog;
  std::vector<bpf_program *> chosen;
  bpf_object__for_each_program(prog, skel->obj) {
    bool want = wanted.erase(bpf_program__name(prog)) > 0;
    bpf_program__set_autoload(prog, want);
    if (want) chosen.push_back(prog);
  }
  if (!wanted.empty()) {
    std::fprintf(stderr, "empty_hooks: no program named %s\n", wanted.begin()->c_str());
    return Usage(skel);
  }
  if (int err = empty_hooks__load(skel)) {
    std::fprintf(stderr, "empty_hooks: load failed: %s\n", std::strerror(-err));
    return 1;
  }
  std::vector<bpf_link *> links;
  for (bpf_program *p : chosen) {
    bpf_link *link = bpf_program__attach(p);
    if (!link) {
      std::fprintf(stderr, "empty_hooks: cannot attach %s: %s\n", bpf_program__name(p),
                   std::strerror(errno));
      return 1;
    }
    links.push_back(link);
  }
  signal(SIGINT, OnSignal);
  signal(SIGTERM, OnSignal);
  std::printf("empty_hooks: attached %zu programs\n", links.size());
  std::fflush(stdout);
  while (!g_stop) pause();
  for (bpf_link *link : links) bpf_link__destroy(link);
  empty_hooks__destroy(skel);
  return 0;
}
