// `ntprofctl watch -o ndjson`: one JSON object per interval, every field with one JSON type
// (protobuf's own JSON mapping writes 64-bit integers as strings, so `sampled` and `p99_ns` were
// strings next to a numeric `mean_ns`). kWatchNdjsonFields documents the shape for `watch --help`.
#pragma once

#include <string>

#include "ntprof/v1/collector.pb.h"

namespace ntprof::cli {

inline constexpr const char* kWatchNdjsonFields = R"FIELDS(
ndjson fields (one object per line; every number is a JSON number, never a string):
  interval_end_wall_ns  integer  end of the interval, ns since the Unix epoch
  interval_s            number   length of the interval in seconds
  dropped_updates       integer  intervals this client lost by reading too slowly (total)
  groups                array    one object per group:
    session             string   the session the group belongs to
    name                string   "read 4KiB nvme0n1"
    scope               string   joined, host_only or target_only
    sampled             integer  sampled commands in the interval
    rate_per_s          number   sampled commands per second
    iops                number   all commands per second (0 without the host's counters)
    mean_ns             number   mean latency
    p99_ns              integer  99th percentile latency
    stages              array    {stage: string, label: string, mean_ns: number, share: number}
    line                string   the table's line for the group
  notes                 array    strings: what the interval leaves out (a collector of the ring
                                 that is down or late); [] when nothing)FIELDS";

// One line of JSON, without the newline.
std::string WatchUpdateJson(const v1::WatchUpdate& update);

}  // namespace ntprof::cli
