// ntp_stamp_check FILE.ntp...: how complete and how well ordered the stamps of recordings are.
// A verification aid for the testbed (not installed): for every read/write record it checks that
// each stage boundary and each component stamp the command should have is there, and that they
// come in the order the command flows; it prints the sampled share of all completed commands.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "ntp_reader.h"
#include "ntprof_record.h"

namespace {

struct Tally {
  uint64_t records = 0, judged = 0, complete = 0, ordered = 0, components = 0;
  uint64_t counted_commands = 0;
  uint64_t r2t = 0, incapsule = 0;
  std::map<std::string, uint64_t> problems;
  std::vector<std::string> out_of_order_examples;  // the first few, stamps relative to stamp 0
};

constexpr size_t kExamples = 5;

// "cid 0x1234 qid 2 op 2: 0:+0 1:+19 ..." with every non-zero stamp in us after the earliest one.
std::string DescribeStamps(const ntprof::v1::Record& r) {
  uint64_t first = UINT64_MAX;
  for (uint64_t s : r.stamps()) if (s) first = std::min(first, s);
  char head[64];
  std::snprintf(head, sizeof(head), "cid 0x%04x qid %u op %u:", r.cid(), r.qid(), r.opcode());
  std::string out = head;
  for (int i = 0; i < r.stamps_size(); ++i) {
    if (!r.stamps(i)) continue;
    char one[48];
    std::snprintf(one, sizeof(one), " %d:+%.1f", i, (r.stamps(i) - first) / 1000.0);
    out += one;
  }
  return out;
}

bool Ordered(const ntprof::v1::Record& r, std::initializer_list<int> chain) {
  uint64_t prev = 0;
  for (int i : chain) {
    if (r.stamps(i) < prev) return false;
    prev = r.stamps(i);
  }
  return true;
}

void Check(const ntprof::v1::Record& r, Tally& t) {
  ++t.records;
  if (r.opcode() != 1 && r.opcode() != 2) return;
  ++t.judged;
  const bool host = r.role() == ntprof::v1::ROLE_HOST;
  const bool local = r.transport() == ntprof::v1::TRANSPORT_LOCAL;
  const bool r2t = r.flags() & NTPROF_F_R2T;
  t.r2t += r2t;
  t.incapsule += (r.flags() & NTPROF_F_INCAPSULE) != 0;
  std::vector<int> core = local ? std::vector<int>{0, 1, 5}
                                : std::vector<int>{0, 1, 2, 3, 4, 5};
  std::vector<int> comps;
  if (host && !local) {
    comps.push_back(NTPROF_H_RESPONSE_RECEIVED);
    if (r2t) comps.insert(comps.end(), {NTPROF_H_R2T_RECEIVED, NTPROF_H_DATA_SENT});
  } else if (!host) {
    comps = {NTPROF_T_DRIVE_ISSUE, NTPROF_T_DRIVE_DONE, NTPROF_T_RESPONSE_SENT};
    if (r2t) comps.insert(comps.end(), {NTPROF_T_R2T_SENT, NTPROF_T_DATA_RECEIVED});
    // NVMe/RDMA: read data is RDMA-written, write data not in the capsule RDMA-read
    if (r.transport() == ntprof::v1::TRANSPORT_RDMA && r.bytes() &&
        (r.opcode() == 2 || !(r.flags() & NTPROF_F_INCAPSULE)))
      comps.insert(comps.end(), {NTPROF_T_XFER_POSTED, NTPROF_T_XFER_DONE});
  }
  bool ok = true;
  for (int i : core) {
    if (!r.stamps(i)) {
      ok = false;
      ++t.problems[(host ? "missing H" : "missing T") + std::to_string(i)];
    }
  }
  if (!ok) return;
  ++t.complete;
  bool comp_ok = true;
  for (int i : comps) {
    if (!r.stamps(i)) {
      comp_ok = false;
      ++t.problems["missing component stamp " + std::to_string(i)];
    }
  }
  bool order = true;
  if (local) {
    order = Ordered(r, {0, 1, 5});
  } else if (host) {
    order = Ordered(r, {0, 1, 2, 3, 4, 5}) &&
            Ordered(r, {NTPROF_H3_REPLY_RECEIVED, NTPROF_H_RESPONSE_RECEIVED, NTPROF_H4_DRIVER_DONE}) &&
            (!r2t || Ordered(r, {NTPROF_H2_CAPSULE_SENT, NTPROF_H_R2T_RECEIVED, NTPROF_H_DATA_SENT,
                                 NTPROF_H3_REPLY_RECEIVED}));
  } else {
    order = Ordered(r, {0, 1, 2, 3, 4, 5, NTPROF_T_RESPONSE_SENT}) &&
            Ordered(r, {NTPROF_T2_BACKEND_SUBMIT, NTPROF_T_DRIVE_ISSUE, NTPROF_T_DRIVE_DONE,
                        NTPROF_T3_BACKEND_DONE}) &&
            (!r2t || Ordered(r, {NTPROF_T1_REQ_INIT, NTPROF_T_R2T_SENT, NTPROF_T_DATA_RECEIVED,
                                 NTPROF_T2_BACKEND_SUBMIT})) &&
            (!r.stamps(NTPROF_T_XFER_POSTED) ||
             Ordered(r, {NTPROF_T0_CAPSULE_RECEIVED, NTPROF_T_XFER_POSTED, NTPROF_T_XFER_DONE,
                         NTPROF_T5_REPLY_SENT}));
  }
  if (comp_ok) ++t.components;
  if (order) {
    ++t.ordered;
  } else {
    ++t.problems["out of order"];
    if (t.out_of_order_examples.size() < kExamples)
      t.out_of_order_examples.push_back(DescribeStamps(r));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: ntp_stamp_check FILE.ntp...\n");
    return 2;
  }
  int rc = 0;
  for (int a = 1; a < argc; ++a) {
    auto reader = ntprof::NtpReader::Open(argv[a]);
    if (!reader.ok()) {
      std::fprintf(stderr, "%s\n", std::string(reader.status().message()).c_str());
      return 1;
    }
    Tally t;
    ntprof::v1::RecordBatch batch;
    ntprof::v1::LossCounters losses;
    while (true) {
      auto more = (*reader)->Next(&batch);
      if (!more.ok()) {
        std::fprintf(stderr, "%s\n", std::string(more.status().message()).c_str());
        return 1;
      }
      if (!*more) break;
      for (const auto& r : batch.records()) Check(r, t);
      for (const auto& c : batch.counters()) t.counted_commands += c.reads() + c.writes();
      losses = batch.losses();
    }
    const auto& h = (*reader)->header();
    auto pct = [](uint64_t a, uint64_t b) { return b ? 100.0 * a / b : 0.0; };
    std::printf("%s: %s, N=%u salt=%llu, %llu records (%llu read/write)\n", argv[a],
                h.role() == ntprof::v1::ROLE_HOST ? "host" : "target", h.sample_rate(),
                (unsigned long long)h.salt(), (unsigned long long)t.records,
                (unsigned long long)t.judged);
    std::printf("  writes with R2T: %llu, with in-capsule data: %llu\n", (unsigned long long)t.r2t,
                (unsigned long long)t.incapsule);
    std::printf("  core stamps complete %.2f %%, ordered %.2f %% of complete, component stamps %.2f %%\n",
                pct(t.complete, t.judged), pct(t.ordered, t.complete), pct(t.components, t.complete));
    if (t.counted_commands) {
      std::printf("  all completed commands counted: %llu; sampled share %.4f (1/N = %.4f)\n",
                  (unsigned long long)t.counted_commands, double(t.judged) / t.counted_commands,
                  h.sample_rate() ? 1.0 / h.sample_rate() : 0.0);
    }
    std::printf("  losses: ring buffer %llu, in-flight table %llu, evicted %llu, missing stamp %llu, nested probe %llu; finalized %s\n",
                (unsigned long long)losses.ring_buffer_full(),
                (unsigned long long)losses.inflight_table_full(),
                (unsigned long long)losses.evicted_incomplete(),
                (unsigned long long)losses.missing_stamp(),
                (unsigned long long)losses.nested_probe_miss(), (*reader)->finalized() ? "yes" : "no");
    for (const auto& [what, n] : t.problems)
      std::printf("  %s: %llu\n", what.c_str(), (unsigned long long)n);
    for (const std::string& e : t.out_of_order_examples)
      std::printf("    out of order, stamp index:+us: %s\n", e.c_str());
    if (t.complete != t.judged || t.ordered != t.complete) rc = 1;
  }
  return rc;
}
