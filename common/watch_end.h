// How Collector.Watch of one session says the session ended: once the session stops, its last
// (partial) interval is sent and the stream finishes with status OK and this trailing metadata,
// whose value says so in words. Without it, an OK finish means the collector went away (shut
// down) and the client reconnects. (Unknown session: NOT_FOUND; stopped already:
// FAILED_PRECONDITION.)
#pragma once

namespace ntprof::common {

inline constexpr const char* kWatchEndKey = "ntprof-watch-end";

}  // namespace ntprof::common
